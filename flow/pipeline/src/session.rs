//! What every command needs from the machine, found once per run and then
//! shared by every launch and device it analyses: the datasheet profiles,
//! the OpenCL devices, the compiler tools.
//! Finding each is lazy, so a command that needs no device never starts
//! the OpenCL runtime.

use crate::device::ocl_failure;
use crate::{Error, Observer};
use clflow_compile::Compiler;
use clflow_devices::ProfileCatalog;
use clflow_ocl::{choose_device, open_devices, DeviceInfo, DeviceSelector, OclDevice};
use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The compiler and what it said since it was last asked.
pub struct Tools {
    pub compiler: Compiler,
    /// The commands the compiler ran, to say once a compile is done.
    trace: Arc<Mutex<Vec<String>>>,
}

impl Tools {
    /// The compiler's trace since the last call.
    pub fn take_trace(&self) -> Vec<String> {
        self.trace
            .lock()
            .map(|mut lines| std::mem::take(&mut *lines))
            .unwrap_or_default()
    }
}

pub struct Session<'o> {
    observer: &'o dyn Observer,
    catalog: OnceCell<ProfileCatalog>,
    devices: OnceCell<Result<Vec<OclDevice>, Error>>,
    tools: OnceCell<Result<Tools, Error>>,
    /// Build options added to every manifest's own (`--build-options`).
    build_options: String,
    /// The programs loaded last, newest last: an application's launches
    /// share a few programs, each of which may take seconds to load.
    programs: RefCell<Vec<(ProgramKey, crate::input::CompiledProgram)>>,
}

/// A program's source, build options, and whether the compile cache was
/// used.
type ProgramKey = (PathBuf, String, bool);

/// Programs a session keeps loaded.
const PROGRAMS_KEPT: usize = 4;

impl<'o> Session<'o> {
    pub fn new(observer: &'o dyn Observer) -> Self {
        Session {
            observer,
            catalog: OnceCell::new(),
            devices: OnceCell::new(),
            tools: OnceCell::new(),
            build_options: String::new(),
            programs: RefCell::new(Vec::new()),
        }
    }

    /// The program `source` built with `build_options`: one loaded earlier
    /// in this session, or what `load` makes of it (then kept).
    pub fn program(
        &self,
        source: &Path,
        build_options: &str,
        use_cache: bool,
        load: impl FnOnce() -> crate::Result<crate::input::CompiledProgram>,
    ) -> crate::Result<crate::input::CompiledProgram> {
        let key = (source.to_path_buf(), build_options.to_string(), use_cache);
        if let Some((_, program)) = self.programs.borrow().iter().find(|(k, _)| *k == key) {
            return Ok(program.clone());
        }
        let program = load()?;
        let mut kept = self.programs.borrow_mut();
        if kept.len() == PROGRAMS_KEPT {
            kept.remove(0);
        }
        kept.push((key, program.clone()));
        Ok(program)
    }

    /// Adds `options` to every manifest's build options (a `.sim` file has
    /// no place for them).
    pub fn with_build_options(mut self, options: &str) -> Self {
        self.build_options = options.trim().to_string();
        self
    }

    /// What [`Session::with_build_options`] added.
    pub fn build_options(&self) -> &str {
        &self.build_options
    }

    pub fn observer(&self) -> &'o dyn Observer {
        self.observer
    }

    /// The datasheet profiles (built in, plus the user's).
    pub fn catalog(&self) -> &ProfileCatalog {
        self.catalog
            .get_or_init(|| crate::profile::catalog(self.observer))
    }

    /// Every OpenCL device, opened once.
    pub fn devices(&self) -> crate::Result<&[OclDevice]> {
        self.devices
            .get_or_init(|| open_devices().map_err(|e| ocl_failure(e, self.observer)))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// What the devices are; none where OpenCL has none to offer (power
    /// sensors match a device among them, and do without).
    pub fn device_infos(&self) -> Vec<DeviceInfo> {
        self.devices()
            .map(|all| all.iter().map(|d| d.info.clone()).collect())
            .unwrap_or_default()
    }

    /// The device a user's selector names (an index or a part of a name).
    pub fn device(&self, selector: &str) -> crate::Result<&OclDevice> {
        let devices = self.devices()?;
        choose_device(&DeviceSelector::parse(selector), devices)
            .map_err(|e| ocl_failure(e, self.observer))
    }

    /// The device at `index` in the list.
    pub fn device_at(&self, index: usize) -> crate::Result<&OclDevice> {
        self.device(&index.to_string())
    }

    /// The compiler tools, found once.
    pub fn tools(&self) -> crate::Result<&Tools> {
        self.tools
            .get_or_init(|| {
                let trace = Arc::new(Mutex::new(Vec::new()));
                let traced = trace.clone();
                let compiler = Compiler::discover()
                    .map_err(Error::from)?
                    .with_trace(move |line| {
                        if let Ok(mut lines) = traced.lock() {
                            lines.push(format!("  {line}"));
                        }
                    });
                Ok(Tools { compiler, trace })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}
