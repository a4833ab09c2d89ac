//! What the layer knows of the application's objects (programs, kernels,
//! buffers, the arguments set on each kernel) and what it has captured.
//! Objects are keyed by their handle's address: the layer never
//! dereferences one, it only hands it back to the runtime.

use crate::programs::Program;
use crate::record::{
    ArgRecord, LaunchRecord, DIR_ENV, KERNELS_ENV, LAUNCHES_ENV, MAX_BYTES_ENV,
    REFUSED_BINARIES_FILE, SKIPPED_SUFFIX,
};
use crate::select::{LaunchSelection, Selection};
use std::collections::HashMap;
use std::path::PathBuf;

pub struct Kernel {
    pub program: usize,
    pub name: String,
    pub args: Vec<RawArg>,
}

/// An argument as `clSetKernelArg` gave it.
#[derive(Clone)]
pub enum RawArg {
    Unset,
    Bytes(Vec<u8>),
    Null(u64),
    /// A shared-virtual-memory pointer (`clSetKernelArgSVMPointer`).
    Svm,
}

pub struct Buffer {
    pub bytes: u64,
    pub flags: u64,
    /// Whether it holds anyone's data yet (see `writes`).
    pub written: bool,
}

/// An image the application made: its type, format and size.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub mem_type: u32,
    pub order: u32,
    pub channel_type: u32,
    pub flags: u64,
    /// Width, then height or layers, then depth or layers.
    pub shape: Vec<u64>,
    /// Bytes of one texel.
    pub texel_bytes: u64,
}

impl Image {
    /// An image of one of the types and formats clflow runs, else why not.
    pub fn new(
        mem_type: u32,
        order: u32,
        channel_type: u32,
        flags: u64,
        [width, height, depth, layers]: [u64; 4],
    ) -> Result<Image, &'static str> {
        let channels = match order {
            0x10B0 => 1,          // CL_R
            0x10B2 => 2,          // CL_RG
            0x10B5 | 0x10B6 => 4, // CL_RGBA, CL_BGRA
            _ => return Err("an image of a channel order clflow does not run"),
        };
        let size = match channel_type {
            0x10D0 | 0x10D2 | 0x10D7 | 0x10DA => 1,
            0x10D1 | 0x10D3 | 0x10D8 | 0x10DB | 0x10DD => 2,
            0x10D9 | 0x10DC | 0x10DE => 4,
            _ => return Err("an image of a channel type clflow does not run"),
        };
        let shape = match mem_type {
            0x10F4 => vec![width],                 // CL_MEM_OBJECT_IMAGE1D
            0x10F1 => vec![width, height],         // CL_MEM_OBJECT_IMAGE2D
            0x10F2 => vec![width, height, depth],  // CL_MEM_OBJECT_IMAGE3D
            0x10F5 => vec![width, layers],         // CL_MEM_OBJECT_IMAGE1D_ARRAY
            0x10F3 => vec![width, height, layers], // CL_MEM_OBJECT_IMAGE2D_ARRAY
            _ => return Err("an image buffer (image1d_buffer_t)"),
        };
        Ok(Image {
            mem_type,
            order,
            channel_type,
            flags,
            shape,
            texel_bytes: channels * size,
        })
    }

    pub fn bytes(&self) -> u64 {
        self.shape.iter().product::<u64>() * self.texel_bytes
    }

    /// The whole image as `clEnqueueReadImage` takes its region.
    pub fn region(&self) -> [usize; 3] {
        let mut region = [1usize; 3];
        for (r, s) in region.iter_mut().zip(&self.shape) {
            *r = *s as usize;
        }
        region
    }
}

/// A sampler the application made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    pub normalized: bool,
    pub addressing: u32,
    pub filter: u32,
}

pub struct State {
    pub dir: PathBuf,
    selection: Selection,
    pub programs: HashMap<usize, Program>,
    pub kernels: HashMap<usize, Kernel>,
    pub buffers: HashMap<usize, Buffer>,
    /// Images and samplers clflow cannot capture: what each is, to name it.
    pub opaque: HashMap<usize, &'static str>,
    pub images: HashMap<usize, Image>,
    pub samplers: HashMap<usize, Sampler>,
    /// The most bytes of buffers to write, and what launches recorded so
    /// far may write.
    max_bytes: Option<u64>,
    planned_bytes: u64,
    pub(crate) next_program: u32,
    next_sequence: u64,
    per_kernel: HashMap<String, u64>,
    /// How many records (written or being written) name each buffer file,
    /// by its name without `.gz`.
    file_refs: HashMap<String, u32>,
    /// For kernels whose last launch is taken: the one recorded so far.
    latest: HashMap<String, Recorded>,
}

/// A launch's record, as much as replacing it needs.
pub struct Recorded {
    pub sequence: u64,
    pub files: Vec<String>,
    /// What it counted against --max-bytes.
    pub bytes: u64,
}

impl State {
    /// The capture's settings from the environment `clflow capture` gives
    /// the application; `None` where no directory is set (the layer then
    /// only passes calls through).
    pub fn from_env() -> Option<State> {
        let dir = PathBuf::from(std::env::var_os(DIR_ENV)?);
        // clflow capture checked the selection before it started the
        // application.
        let selection = Selection::from_texts(
            &std::env::var(KERNELS_ENV).unwrap_or_default(),
            &std::env::var(LAUNCHES_ENV).unwrap_or_default(),
        )
        .unwrap_or_default();
        let max_bytes = std::env::var(MAX_BYTES_ENV)
            .ok()
            .and_then(|s| s.parse().ok());
        std::fs::create_dir_all(&dir).ok()?;
        Some(State::new(dir, selection, max_bytes))
    }

    /// Notes a program from device binaries refused (`FROM_SOURCE_ENV`).
    pub fn refused_binary(&mut self) {
        use std::io::Write;
        let path = self.dir.join(REFUSED_BINARIES_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        if let Ok(mut file) = file {
            let _ = writeln!(file, "a program from device binaries");
        }
    }

    pub(crate) fn new(dir: PathBuf, selection: Selection, max_bytes: Option<u64>) -> State {
        State {
            dir,
            selection,
            programs: HashMap::new(),
            kernels: HashMap::new(),
            buffers: HashMap::new(),
            opaque: HashMap::new(),
            images: HashMap::new(),
            samplers: HashMap::new(),
            max_bytes,
            planned_bytes: 0,
            next_program: 0,
            next_sequence: 0,
            per_kernel: HashMap::new(),
            file_refs: HashMap::new(),
            latest: HashMap::new(),
        }
    }

    /// Numbers the launch of `kernel` and says whether the selection takes
    /// it: (sequence, index among this kernel's launches, taken).
    pub fn next_launch(&mut self, kernel: &str) -> (u64, u64, bool) {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let count = self.per_kernel.entry(kernel.to_string()).or_default();
        let index = *count;
        *count += 1;
        let taken = self.selection.of(kernel).is_some_and(|s| s.takes(index));
        (sequence, index, taken)
    }

    /// Whether each launch of `kernel` replaces the one recorded before
    /// (`last`).
    pub fn keeps_only_latest(&self, kernel: &str) -> bool {
        self.selection.of(kernel) == Some(&LaunchSelection::Last)
    }

    /// A record about to name the buffer file `stem` (or `stem.gz`): it
    /// stays while any record does.
    pub fn hold(&mut self, stem: &str) {
        *self.file_refs.entry(stem.to_string()).or_default() += 1;
    }

    /// Makes `recorded` the latest launch of `kernel`, removing the one
    /// before: its record, the buffer files no other record names, and its
    /// share of --max-bytes.
    pub fn replace_latest(&mut self, kernel: &str, recorded: Recorded) {
        let Some(earlier) = self.latest.insert(kernel.to_string(), recorded) else {
            return;
        };
        let record = self
            .dir
            .join(format!("launch-{:06}.json", earlier.sequence));
        let _ = std::fs::remove_file(record);
        for file in earlier.files {
            let stem = file.strip_suffix(".gz").unwrap_or(&file).to_string();
            let refs = self.file_refs.entry(stem.clone()).or_default();
            *refs = refs.saturating_sub(1);
            if *refs == 0 {
                self.file_refs.remove(&stem);
                let _ = std::fs::remove_file(self.dir.join(&stem));
                let _ = std::fs::remove_file(self.dir.join(format!("{stem}.gz")));
            }
        }
        self.planned_bytes = self.planned_bytes.saturating_sub(earlier.bytes);
    }

    /// Leaves a note for a launch of a kernel the layer did not see made.
    pub fn unknown_launch(&mut self) {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let note = self
            .dir
            .join(format!("launch-{sequence:06}.{SKIPPED_SUFFIX}"));
        let _ = std::fs::write(
            note,
            format!("launch {sequence}: a kernel made in a way the capture does not follow (e.g. cloned)"),
        );
    }

    /// Whether a launch that may write `bytes` of buffers fits the bound;
    /// where it does not, leaves a note saying so instead of its record.
    pub fn fits(&mut self, sequence: u64, kernel: &str, index: u64, bytes: u64) -> bool {
        let Some(max) = self.max_bytes else {
            return true;
        };
        if self.planned_bytes + bytes <= max {
            self.planned_bytes += bytes;
            return true;
        }
        let why = format!(
            "{kernel} #{index} (launch {sequence}): its {bytes} bytes of buffers would take the \
             capture past --max-bytes {max}"
        );
        let note = self
            .dir
            .join(format!("launch-{sequence:06}.{SKIPPED_SUFFIX}"));
        let _ = std::fs::write(note, why);
        false
    }

    pub fn write_launch(&self, launch: &LaunchRecord) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(launch).unwrap_or_default();
        // Written under another name first, so that a crash never leaves
        // half a record.
        let path = self.dir.join(format!("launch-{:06}.json", launch.sequence));
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, json)?;
        std::fs::rename(partial, path)
    }
}

/// The record of an argument that is not a buffer.
pub fn plain_arg(arg: &RawArg) -> ArgRecord {
    match arg {
        RawArg::Unset => ArgRecord::Unset,
        RawArg::Null(size) => ArgRecord::NullValue { size: *size },
        RawArg::Bytes(bytes) => ArgRecord::Value { bytes: bytes.clone() },
        RawArg::Svm => ArgRecord::Unsupported { what: "a shared virtual memory pointer".into() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::ProgramText;
    use crate::record::ProgramRecord;

    #[test]
    fn programs_are_written_once_as_their_source_or_module() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = State::new(dir.path().to_path_buf(), Selection::default(), None);
        let module = vec![0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0];
        state.add_program(
            1,
            Some(ProgramText::OpenClC("__kernel void k() {}".into())),
            None,
        );
        state.add_program(2, Some(ProgramText::Spirv(module.clone())), None);
        state.add_program(3, None, Some("from a device binary".into()));
        assert_eq!(state.write_program(1).unwrap(), 0);
        assert_eq!(state.write_program(2).unwrap(), 1);
        assert_eq!(state.write_program(2).unwrap(), 1);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("program-0.cl")).unwrap(),
            "__kernel void k() {}"
        );
        assert_eq!(
            std::fs::read(dir.path().join("program-1.spv")).unwrap(),
            module
        );
        let record: ProgramRecord = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("program-1.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(record.source_file.as_deref(), Some("program-1.spv"));
        assert_eq!(record.not_analysable, None);
        assert_eq!(state.programs[&3].record.source_file, None);
    }

    #[test]
    fn a_latest_launch_replaces_the_one_before_and_the_files_only_it_named() {
        let dir = tempfile::tempdir().unwrap();
        let selection = Selection::parse(&[], &["k:last".into()]).unwrap();
        let mut state = State::new(dir.path().to_path_buf(), selection, None);
        assert!(state.keeps_only_latest("k") && !state.keeps_only_latest("other"));
        for name in [
            "buffer-a.bin",
            "buffer-b.bin.gz",
            "buffer-c.bin",
            "launch-000000.json",
        ] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        // Launch 0 names a and b; another kernel's record names a too.
        state.hold("buffer-a.bin");
        state.hold("buffer-b.bin");
        state.hold("buffer-a.bin");
        let first = Recorded {
            sequence: 0,
            files: vec!["buffer-a.bin".into(), "buffer-b.bin.gz".into()],
            bytes: 8,
        };
        state.replace_latest("k", first);
        state.hold("buffer-c.bin");
        let second = Recorded { sequence: 1, files: vec!["buffer-c.bin".into()], bytes: 8 };
        state.replace_latest("k", second);
        let left: std::collections::BTreeSet<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let expected: std::collections::BTreeSet<String> =
            ["buffer-a.bin", "buffer-c.bin"].map(String::from).into();
        assert_eq!(left, expected);
    }
}
