//! The programs an application builds, as much of them as clflow needs to
//! build them again: sources (or a SPIR-V module), options, and the headers
//! a separate compilation (`clCompileProgram`) was given; a linked program
//! (`clLinkProgram`) is its inputs' sources together.

use crate::record::ProgramRecord;
use crate::state::State;

pub struct Program {
    pub record: ProgramRecord,
    /// The sources, until they are written with the first captured launch.
    pub source: Option<ProgramText>,
    /// Embedded headers (`clCompileProgram`'s `input_headers`): the name
    /// the source includes each by, and its text.
    pub headers: Vec<(String, String)>,
    pub written: bool,
}

/// What a program was made from, where clflow can analyse it.
pub enum ProgramText {
    /// All source strings, in order.
    OpenClC(String),
    /// A SPIR-V module (`clCreateProgramWithIL`).
    Spirv(Vec<u8>),
}

impl ProgramText {
    fn extension(&self) -> &'static str {
        match self {
            ProgramText::OpenClC(_) => "cl",
            ProgramText::Spirv(_) => "spv",
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            ProgramText::OpenClC(text) => text.as_bytes(),
            ProgramText::Spirv(module) => module,
        }
    }
}

/// Whether a header's include name stays inside the directory it is
/// written to (no absolute path, no `..`).
fn contained(name: &str) -> bool {
    let path = std::path::Path::new(name);
    !name.is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

impl State {
    pub fn add_program(
        &mut self,
        handle: usize,
        source: Option<ProgramText>,
        why_not: Option<String>,
    ) {
        let id = self.next_program;
        self.next_program += 1;
        self.programs.insert(
            handle,
            Program {
                record: ProgramRecord {
                    id,
                    source_file: source
                        .as_ref()
                        .map(|s| format!("program-{id}.{}", s.extension())),
                    not_analysable: why_not,
                    build_options: String::new(),
                },
                source,
                headers: Vec::new(),
                written: false,
            },
        );
    }

    /// `clCompileProgram`: its options, and the headers it names by the
    /// programs holding their text.
    pub fn compile_program(&mut self, handle: usize, options: String, headers: &[(usize, String)]) {
        let texts: Vec<(String, String)> = headers
            .iter()
            .filter_map(|(header, name)| match &self.programs.get(header)?.source {
                Some(ProgramText::OpenClC(text)) => Some((name.clone(), text.clone())),
                _ => None,
            })
            .collect();
        if let Some(program) = self.programs.get_mut(&handle) {
            program.record.build_options = options;
            program.headers = texts;
            let refused: Vec<&str> = headers
                .iter()
                .map(|(_, name)| name.as_str())
                .filter(|name| !contained(name))
                .collect();
            if !refused.is_empty() {
                program.record.not_analysable = Some(format!(
                    "its headers are named outside its directory ({})",
                    refused.join(", ")
                ));
            }
        }
    }

    /// `clLinkProgram` made `handle` of `inputs`: their sources in order,
    /// the first one's compile options, all their headers.
    pub fn link_program(&mut self, handle: usize, inputs: &[usize]) {
        let mut sources = Vec::new();
        let mut headers = Vec::new();
        let mut options = None;
        let mut why_not = None;
        for input in inputs {
            match self.programs.get(input) {
                Some(Program {
                    source: Some(ProgramText::OpenClC(text)),
                    record,
                    headers: its_headers,
                    ..
                }) if record.not_analysable.is_none() => {
                    sources.push(text.clone());
                    headers.extend(its_headers.iter().cloned());
                    options.get_or_insert_with(|| record.build_options.clone());
                }
                _ => {
                    why_not = Some(
                        "linked from a program clflow has no OpenCL C source of (a binary, IL, \
                         or made before the capture)"
                            .to_string(),
                    )
                }
            }
        }
        let source = why_not
            .is_none()
            .then(|| ProgramText::OpenClC(sources.join("\n")));
        self.add_program(handle, source, why_not);
        if let Some(program) = self.programs.get_mut(&handle) {
            program.record.build_options = options.unwrap_or_default();
            program.headers = headers;
        }
    }

    /// Writes the program's files once; its record's name for the launch.
    /// A program with headers goes in a directory of its own, its headers
    /// beside it where its `#include "..."` finds them.
    pub fn write_program(&mut self, handle: usize) -> std::io::Result<u32> {
        let dir = self.dir.clone();
        let Some(program) = self.programs.get_mut(&handle) else {
            return Ok(u32::MAX);
        };
        if !program.written {
            let id = program.record.id;
            if !program.headers.is_empty() && program.record.source_file.is_some() {
                let own = format!("program-{id}");
                for (name, text) in &program.headers {
                    let path = dir.join(&own).join(name);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(path, text)?;
                }
                program.record.source_file = Some(format!("{own}/program-{id}.cl"));
            }
            if let (Some(file), Some(source)) = (&program.record.source_file, &program.source) {
                std::fs::write(dir.join(file), source.bytes())?;
            }
            let json = serde_json::to_string_pretty(&program.record).unwrap_or_default();
            std::fs::write(dir.join(format!("program-{id}.json")), json)?;
            program.written = true;
        }
        Ok(program.record.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::Selection;

    #[test]
    fn a_linked_program_keeps_its_inputs_sources_options_and_headers() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = State::new(dir.path().to_path_buf(), Selection::default(), None);
        let text = |t: &str| Some(ProgramText::OpenClC(t.into()));
        state.add_program(
            1,
            text("#include \"inc/scale.h\"\nfloat f(float x) { return SCALE * x; }"),
            None,
        );
        state.add_program(2, text("#define SCALE 3.0f\n"), None);
        state.add_program(
            3,
            text("float f(float);\n__kernel void k(__global float *a) { a[0] = f(a[0]); }"),
            None,
        );
        state.compile_program(1, "-DX=1".into(), &[(2, "inc/scale.h".into())]);
        state.compile_program(3, "-DX=1".into(), &[]);
        state.link_program(4, &[1, 3]);
        let id = state.write_program(4).unwrap();
        let source = format!("program-{id}/program-{id}.cl");
        assert_eq!(
            state.programs[&4].record.source_file.as_deref(),
            Some(source.as_str())
        );
        assert_eq!(state.programs[&4].record.build_options, "-DX=1");
        let written = std::fs::read_to_string(dir.path().join(&source)).unwrap();
        assert!(written.contains("return SCALE * x;") && written.contains("__kernel void k"));
        let header = dir.path().join(format!("program-{id}/inc/scale.h"));
        assert_eq!(
            std::fs::read_to_string(header).unwrap(),
            "#define SCALE 3.0f\n"
        );

        // A header named outside the program's directory is refused, and
        // a link of a program without source says why.
        state.compile_program(1, String::new(), &[(2, "../escape.h".into())]);
        assert!(state.programs[&1].record.not_analysable.is_some());
        state.add_program(5, None, Some("from a device binary".into()));
        state.link_program(6, &[5]);
        assert!(state.programs[&6]
            .record
            .not_analysable
            .as_deref()
            .unwrap()
            .contains("linked from"));
    }
}
