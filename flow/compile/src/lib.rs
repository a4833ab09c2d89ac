//! The compile stage of clflow: OpenCL C → validated SPIR-V.
//!
//! ```no_run
//! use clflow_compile::{CompileRequest, Compiler};
//! use std::path::Path;
//!
//! let compiler = Compiler::discover()?;
//! let compiled = compiler.compile(&CompileRequest::new(Path::new("vadd.cl"), "-D N=4"))?;
//! let module = clflow_spirv::load(&compiled.spirv).unwrap();
//! # Ok::<(), clflow_compile::CompileError>(())
//! ```
//!
//! The tools (clang-15, llvm-spirv-15, spirv-val, and opt-15 for the
//! fallback described in [`pipeline`](crate::pipeline)) are found on PATH or
//! through `CLFLOW_CLANG`, `CLFLOW_LLVM_SPIRV`, `CLFLOW_SPIRV_VAL`,
//! `CLFLOW_OPT`. Results are cached (see [`cache`](crate::cache)).

pub mod cache;
mod error;
mod input;
mod loop_locations;
mod options;
pub mod pipeline;
mod stamps;
mod tools;
mod translatable;

pub use error::{CompileError, SETUP_HINT};
pub use options::{BuildOptions, DEFAULT_STD};
pub use tools::{Tool, ToolSpec, CLANG, LLVM_SPIRV, OPT, SPIRV_VAL};

use cache::{Cache, Entry, KeyInputs};
use pipeline::Pipeline;
use std::path::{Path, PathBuf};

/// One kernel source to compile.
#[derive(Debug, Clone, Copy)]
pub struct CompileRequest<'a> {
    /// The `.cl` file, as the user named it (diagnostics repeat it).
    pub source: &'a Path,
    /// OpenCL build options: `-D`, `-I`, `-cl-std=`, `-cl-*`, `-w`, `-Werror`.
    pub build_options: &'a str,
    /// `false` rebuilds even where the cache holds the module (and does not
    /// store the result).
    pub use_cache: bool,
}

impl<'a> CompileRequest<'a> {
    pub fn new(source: &'a Path, build_options: &'a str) -> Self {
        CompileRequest { source, build_options, use_cache: true }
    }
}

/// A compiled, validated module.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub spirv: Vec<u8>,
    pub from_cache: bool,
    /// Whether the fallback (unoptimised clang + opt-15) built it (see [`pipeline`]).
    pub fallback_used: bool,
    /// Whether the file was a SPIR-V module, taken as it is (no build, no
    /// cache; the key is a SHA-256 of the module).
    pub given_module: bool,
    /// The cache key: a SHA-256 of the preprocessed source, options and
    /// tool versions.
    pub cache_key: String,
    /// Compiler warnings on a fresh build (empty when none or cached).
    pub warnings: String,
    /// Things worth telling the user that are not failures (a cache that
    /// could not be written).
    pub notes: Vec<String>,
}

/// The discovered tool set, ready to compile.
pub struct Compiler {
    clang: Tool,
    llvm_spirv: Tool,
    spirv_val: Tool,
    /// opt-15, where present: only the fallback runs it, yet its version
    /// decides what the fallback builds, so it belongs in the key.
    opt: Option<Tool>,
    /// The tools' `--version` outputs, asked on the first compile (or
    /// taken from their memo, see [`stamps`]).
    tool_versions: std::sync::OnceLock<Vec<String>>,
    cache_dir: Option<PathBuf>,
    trace: Box<dyn Fn(&str) + Send + Sync>,
    lines: bool,
}

impl Compiler {
    /// Finds the tools and the cache directory ([`cache::default_dir`]).
    pub fn discover() -> Result<Self, CompileError> {
        Ok(Compiler {
            clang: CLANG.find()?,
            llvm_spirv: LLVM_SPIRV.find()?,
            spirv_val: SPIRV_VAL.find()?,
            opt: OPT.find().ok(),
            tool_versions: std::sync::OnceLock::new(),
            cache_dir: cache::default_dir(),
            trace: Box::new(|_| {}),
            lines: true,
        })
    }

    /// Builds modules with source lines (`OpLine`, the default) or without.
    /// Line information changes no count: only what the counts are
    /// attributed to.
    pub fn with_lines(mut self, lines: bool) -> Self {
        self.lines = lines;
        self
    }

    /// Uses `dir` for the cache, or no cache at all.
    pub fn with_cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    /// Receives each command line run and each decision taken (for `-v`).
    pub fn with_trace(mut self, trace: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.trace = Box::new(trace);
        self
    }

    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// The tools' `--version` outputs: clang-15, llvm-spirv-15, opt-15.
    /// Starting an LLVM tool takes tens of milliseconds, so each is asked
    /// once per tool file (see [`stamps`]), the ones asked at once.
    fn tool_versions(&self) -> Result<&[String], CompileError> {
        if let Some(versions) = self.tool_versions.get() {
            return Ok(versions);
        }
        let dir = self.cache_dir.as_deref();
        let version = |tool: &Tool| stamps::tool_version(dir, &tool.path, || tool.version());
        let versions = std::thread::scope(|scope| {
            let clang = scope.spawn(|| version(&self.clang));
            let llvm_spirv = scope.spawn(|| version(&self.llvm_spirv));
            let opt = match &self.opt {
                Some(opt) => version(opt)?,
                None => "opt-15 absent".to_string(),
            };
            let joined = |handle: std::thread::ScopedJoinHandle<'_, _>| {
                handle.join().unwrap_or_else(|_| {
                    Err(CompileError::Io {
                        what: "cannot ask the tools for their versions".into(),
                        reason: "a worker thread failed".into(),
                    })
                })
            };
            Ok::<_, CompileError>(vec![joined(clang)?, joined(llvm_spirv)?, opt])
        })?;
        Ok(self.tool_versions.get_or_init(|| versions))
    }

    pub fn compile(&self, request: &CompileRequest) -> Result<Compiled, CompileError> {
        check_readable(request.source)?;
        if let input::Input::Spirv(module) = input::sniff(request.source)? {
            return self.take_module(request, module);
        }
        let options = BuildOptions::parse(request.build_options)?.clang_args();
        let tool_versions = self.tool_versions()?;
        // A module without lines is another module.
        let mut key_options = options.clone();
        if !self.lines {
            key_options.push("clflow: no line tables".into());
        }
        let cache = self
            .cache_dir
            .clone()
            .filter(|_| request.use_cache)
            .map(Cache::new);
        // The key without preprocessing, while the source and its headers
        // are as they were when it was last worked out.
        // Where includes are looked for also decides which files they are.
        let searched: Vec<Vec<u8>> = std::iter::once(std::env::current_dir().unwrap_or_default())
            .map(|dir| dir.into_os_string())
            .chain(["CPATH", "C_INCLUDE_PATH"].map(|v| std::env::var_os(v).unwrap_or_default()))
            .map(|text| text.into_encoded_bytes())
            .collect();
        let mut parts: Vec<&[u8]> = vec![cache::PIPELINE_VERSION.as_bytes()];
        parts.extend(key_options.iter().map(|o| o.as_bytes()));
        parts.extend(tool_versions.iter().map(|v| v.as_bytes()));
        parts.extend(searched.iter().map(Vec::as_slice));
        let memo = self
            .cache_dir
            .as_deref()
            .filter(|_| request.use_cache)
            .map(|dir| stamps::SourceKey::new(dir, request.source, &parts));
        let hit = |cache: &Cache, key: &str| {
            let entry = cache.get(key)?;
            (self.trace)(&format!("cache hit: {}", cache.path(key).display()));
            Some(Compiled {
                spirv: entry.spirv,
                from_cache: true,
                fallback_used: entry.fallback_used,
                given_module: false,
                cache_key: key.to_string(),
                warnings: String::new(),
                notes: Vec::new(),
            })
        };
        if let (Some(cache), Some(key)) = (&cache, memo.as_ref().and_then(|m| m.get())) {
            if let Some(compiled) = hit(cache, &key) {
                (self.trace)("  (the source and its headers unchanged: not preprocessed)");
                return Ok(compiled);
            }
        }

        let pipeline = self.pipeline(request.source, &options);
        let preprocessed = pipeline.preprocess()?;
        let key = cache::key(&KeyInputs {
            preprocessed: &preprocessed,
            options: &key_options,
            tool_versions,
        });
        if let Some(memo) = &memo {
            memo.put(&key, &preprocessed);
        }
        if let Some(compiled) = cache.as_ref().and_then(|c| hit(c, &key)) {
            return Ok(compiled);
        }

        let built = pipeline.build()?;
        let mut notes = Vec::new();
        if let Some(cache) = &cache {
            let entry = Entry {
                spirv: built.spirv.clone(),
                fallback_used: built.fallback_used,
            };
            match cache.put(&key, &entry) {
                Ok(()) => (self.trace)(&format!("cached as {}", cache.path(&key).display())),
                Err(message) => notes.push(message),
            }
        }
        Ok(Compiled {
            spirv: built.spirv,
            from_cache: false,
            fallback_used: built.fallback_used,
            given_module: false,
            cache_key: key,
            warnings: built.warnings,
            notes,
        })
    }
}

/// opt-15, looked up again by the fallback that needs it (with the error
/// that names it where it is missing).
fn find_opt() -> Result<Tool, CompileError> {
    OPT.find()
}

impl Compiler {
    /// The tool invocations for `source` built with `options`.
    fn pipeline<'a>(&'a self, source: &'a Path, options: &'a [String]) -> Pipeline<'a> {
        Pipeline {
            clang: &self.clang,
            llvm_spirv: &self.llvm_spirv,
            spirv_val: &self.spirv_val,
            opt: &find_opt,
            trace: &*self.trace,
            source,
            options,
            lines: self.lines,
        }
    }

    /// A SPIR-V module given as the kernel: loaded, its blocks put in
    /// order where they are not, and validated like a module of our own.
    fn take_module(
        &self,
        request: &CompileRequest,
        module: Vec<u8>,
    ) -> Result<Compiled, CompileError> {
        clflow_spirv::load(&module).map_err(|e| CompileError::NotAKernel {
            path: request.source.to_path_buf(),
            reason: format!("not a SPIR-V module clflow can read: {e}"),
        })?;
        let spirv = self.pipeline(request.source, &[]).check_module(module)?;
        let mut notes = Vec::new();
        if !request.build_options.trim().is_empty() {
            notes.push(format!(
                "{}: a SPIR-V module is already compiled; build options `{}` go only to device builds",
                request.source.display(),
                request.build_options.trim()
            ));
        }
        use sha2::Digest;
        Ok(Compiled {
            cache_key: hex::encode(sha2::Sha256::digest(&spirv)),
            spirv,
            from_cache: false,
            fallback_used: false,
            given_module: true,
            warnings: String::new(),
            notes,
        })
    }
}

/// A missing or unreadable source is the user's to fix, and clearer said
/// by us than by clang.
fn check_readable(source: &Path) -> Result<(), CompileError> {
    let unreadable =
        |reason: String| CompileError::SourceUnreadable { path: source.to_path_buf(), reason };
    let meta = std::fs::metadata(source).map_err(|e| unreadable(io_reason(&e)))?;
    if meta.is_dir() {
        return Err(unreadable("it is a directory".into()));
    }
    std::fs::File::open(source).map_err(|e| unreadable(io_reason(&e)))?;
    Ok(())
}

/// `No such file or directory`, without Rust's `(os error 2)` suffix.
fn io_reason(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
