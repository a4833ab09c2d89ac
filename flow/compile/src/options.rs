//! OpenCL build options (what `clBuildProgram` takes) → clang arguments.
//!
//! Only the options the OpenCL specification defines pass through, so that a
//! manifest written for clflow also builds on every OpenCL device. Anything
//! else is refused by name rather than handed to clang to misread.

use crate::CompileError;

/// The OpenCL C version used when the build options name none.
pub const DEFAULT_STD: &str = "-cl-std=CL1.2";

/// `-cl-*` flags clang-15 accepts with no value.
const CL_FLAGS: [&str; 13] = [
    "-cl-denorms-are-zero",
    "-cl-fast-relaxed-math",
    "-cl-finite-math-only",
    "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-kernel-arg-info",
    "-cl-mad-enable",
    "-cl-no-signed-zeros",
    "-cl-no-stdinc",
    "-cl-opt-disable",
    "-cl-single-precision-constant",
    "-cl-strict-aliasing",
    "-cl-uniform-work-group-size",
    "-cl-unsafe-math-optimizations",
];

/// `-cl-*` options clang-15 accepts with `=value`.
const CL_VALUED: [&str; 2] = ["-cl-std=", "-cl-ext="];

const OTHER_FLAGS: [&str; 2] = ["-w", "-Werror"];

/// Parsed build options: the clang arguments they become.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BuildOptions {
    args: Vec<String>,
}

impl BuildOptions {
    pub fn parse(text: &str) -> Result<Self, CompileError> {
        let mut words = split_words(text)?.into_iter();
        let mut args = Vec::new();
        while let Some(word) = words.next() {
            if let Some(prefix) = ["-D", "-I"].into_iter().find(|p| word.starts_with(p)) {
                // `-D NAME` and `-DNAME` alike, joined so that each option is
                // one argument.
                let value = if word.len() > prefix.len() {
                    word[prefix.len()..].to_string()
                } else {
                    words.next().ok_or_else(|| CompileError::BadBuildOption {
                        option: word.clone(),
                        reason: format!("`{prefix}` needs a value"),
                    })?
                };
                if value.is_empty() || value.starts_with('-') {
                    return Err(CompileError::BadBuildOption {
                        option: format!("{prefix} {value}").trim().to_string(),
                        reason: format!("`{prefix}` needs a value"),
                    });
                }
                args.push(format!("{prefix}{value}"));
            } else if CL_FLAGS.contains(&word.as_str())
                || OTHER_FLAGS.contains(&word.as_str())
                || CL_VALUED
                    .iter()
                    .any(|p| word.starts_with(p) && word.len() > p.len())
            {
                args.push(word);
            } else {
                return Err(CompileError::BadBuildOption {
                    option: word,
                    reason: "not an OpenCL build option clflow passes on to clang".into(),
                });
            }
        }
        Ok(BuildOptions { args })
    }

    /// The clang arguments, starting with the default `-cl-std` unless the
    /// options name their own.
    pub fn clang_args(&self) -> Vec<String> {
        let mut args = Vec::with_capacity(self.args.len() + 1);
        if !self.args.iter().any(|a| a.starts_with("-cl-std=")) {
            args.push(DEFAULT_STD.to_string());
        }
        args.extend(self.args.iter().cloned());
        args
    }
}

/// Splits like a POSIX shell does for plain words: whitespace separates,
/// single quotes keep everything, double quotes keep all but `\"` and `\\`,
/// a backslash outside quotes escapes the next character.
fn split_words(text: &str) -> Result<Vec<String>, CompileError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    let unterminated = |quote: char| CompileError::BadBuildOption {
        option: text.to_string(),
        reason: format!("unterminated {quote} quote"),
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => current.push(c),
                        None => return Err(unterminated('\'')),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => current.push(c),
                            Some(c) => {
                                current.push('\\');
                                current.push(c);
                            }
                            None => return Err(unterminated('"')),
                        },
                        Some(c) => current.push(c),
                        None => return Err(unterminated('"')),
                    }
                }
            }
            '\\' => {
                let current = word.get_or_insert_with(String::new);
                if let Some(c) = chars.next() {
                    current.push(c);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        BuildOptions::parse(text).unwrap().clang_args()
    }

    #[test]
    fn defines_and_includes_in_both_forms() {
        assert_eq!(
            args("-D N=4 -DM -I inc -Iother -cl-mad-enable"),
            [
                "-cl-std=CL1.2",
                "-DN=4",
                "-DM",
                "-Iinc",
                "-Iother",
                "-cl-mad-enable"
            ]
        );
    }

    #[test]
    fn a_given_std_replaces_the_default() {
        assert_eq!(args("-cl-std=CL2.0 -w"), ["-cl-std=CL2.0", "-w"]);
        assert_eq!(args(""), ["-cl-std=CL1.2"]);
    }

    #[test]
    fn quotes_keep_spaces() {
        assert_eq!(
            args(r#"-D 'MSG=a b' "-DQ=\"x\"""#),
            ["-cl-std=CL1.2", "-DMSG=a b", r#"-DQ="x""#]
        );
    }

    #[test]
    fn refuses_what_opencl_does_not_define() {
        for (text, option) in [
            ("-O3", "-O3"),
            ("-D", "-D"),
            ("-I -w", "-I -w"),
            ("-cl-std=", "-cl-std="),
            ("-cl-fast-math", "-cl-fast-math"),
            ("-o out.bc", "-o"),
        ] {
            match BuildOptions::parse(text) {
                Err(CompileError::BadBuildOption { option: named, .. }) => {
                    assert_eq!(named, option, "{text}")
                }
                other => panic!("{text}: expected a bad-option error, got {other:?}"),
            }
        }
        assert!(matches!(
            BuildOptions::parse("-D 'X"),
            Err(CompileError::BadBuildOption { .. })
        ));
    }
}
