//! Finding the external tools and running them.
//!
//! Each tool is looked up on PATH under its Debian name, or taken from an
//! environment variable (a path, or a name to look up on PATH).

use crate::CompileError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One tool the pipeline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// How messages name it.
    pub label: &'static str,
    /// The executable looked for on PATH.
    pub default_name: &'static str,
    /// The environment variable that overrides it.
    pub variable: &'static str,
}

pub const CLANG: ToolSpec = ToolSpec {
    label: "clang-15",
    default_name: "clang-15",
    variable: "CLFLOW_CLANG",
};
pub const LLVM_SPIRV: ToolSpec = ToolSpec {
    label: "llvm-spirv-15",
    default_name: "llvm-spirv-15",
    variable: "CLFLOW_LLVM_SPIRV",
};
pub const OPT: ToolSpec = ToolSpec {
    label: "opt-15",
    default_name: "opt-15",
    variable: "CLFLOW_OPT",
};
pub const SPIRV_VAL: ToolSpec = ToolSpec {
    label: "spirv-val",
    default_name: "spirv-val",
    variable: "CLFLOW_SPIRV_VAL",
};

/// A tool found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub spec: ToolSpec,
    pub path: PathBuf,
}

impl ToolSpec {
    /// Where the tool is, or an error naming it and its variable.
    pub fn find(self) -> Result<Tool, CompileError> {
        let wanted: OsString = std::env::var_os(self.variable)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| self.default_name.into());
        let missing = || CompileError::ToolMissing {
            tool: self.label,
            looked_for: wanted.to_string_lossy().into_owned(),
            variable: self.variable,
        };
        let wanted_path = Path::new(&wanted);
        let path = if wanted_path.components().count() > 1 {
            is_executable(wanted_path).then(|| wanted_path.to_path_buf())
        } else {
            search_path(&wanted)
        };
        path.map(|path| Tool { spec: self, path })
            .ok_or_else(missing)
    }
}

fn search_path(name: &OsString) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

impl Tool {
    pub fn command(&self) -> Command {
        Command::new(&self.path)
    }

    /// Runs the tool; failing to start it at all is an error naming it.
    pub fn run(&self, command: &mut Command) -> Result<Output, CompileError> {
        command.output().map_err(|e| CompileError::Io {
            what: format!("cannot run {} (`{}`)", self.spec.label, self.path.display()),
            reason: e.to_string(),
        })
    }

    /// What `--version` prints, which goes into the cache key so that an
    /// upgraded tool never serves modules an older one built.
    pub fn version(&self) -> Result<String, CompileError> {
        let output = self.run(self.command().arg("--version"))?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok(text.trim().to_string())
    }
}

/// A command line as `-v` shows it.
pub fn render(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| {
            let text = part.to_string_lossy();
            if text.contains(char::is_whitespace) || text.contains('\'') {
                format!("'{}'", text.replace('\'', r"'\''"))
            } else {
                text.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::Diagnostic;

    #[test]
    fn a_missing_tool_names_itself_and_its_variable() {
        let spec = ToolSpec {
            label: "frobnicate-15",
            default_name: "clflow-test-no-such-tool",
            variable: "CLFLOW_TEST_NO_SUCH_TOOL",
        };
        let err = spec.find().unwrap_err();
        assert_eq!(
            err.to_string(),
            "frobnicate-15 not found (looked for `clflow-test-no-such-tool` on PATH; set CLFLOW_TEST_NO_SUCH_TOOL to its path)"
        );
        assert!(err.hint().unwrap().contains("ci/setup"));
    }

    #[test]
    fn renders_commands_quoted() {
        let mut command = Command::new("clang-15");
        command.args(["-DMSG=a b", "-O2"]);
        assert_eq!(render(&command), "clang-15 '-DMSG=a b' -O2");
    }
}
