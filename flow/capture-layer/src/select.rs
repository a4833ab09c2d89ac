//! Which launches a capture takes: kernel-name globs, and per kernel which
//! of its launches (`--launches`).

/// Which launches of one kernel: `all`, `first`, `last`, `every:N`, or
/// indexes and ranges (`0,5-9`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchSelection {
    All,
    /// Every Nth launch, from the first.
    Every(u64),
    /// These indexes and ranges (inclusive).
    Indexes(Vec<(u64, u64)>),
    /// The last: which one that is is known only when the application has
    /// ended, so each launch is captured and replaces the one before.
    Last,
}

impl LaunchSelection {
    pub fn parse(text: &str) -> Result<LaunchSelection, String> {
        let text = text.trim();
        match text {
            "" | "all" => return Ok(LaunchSelection::All),
            "first" => return Ok(LaunchSelection::Indexes(vec![(0, 0)])),
            "last" => return Ok(LaunchSelection::Last),
            _ => {}
        }
        if let Some(n) = text.strip_prefix("every:") {
            return match n.parse::<u64>() {
                Ok(n) if n > 0 => Ok(LaunchSelection::Every(n)),
                _ => Err(format!("`{text}`: every:N takes a positive N")),
            };
        }
        let mut ranges = Vec::new();
        for part in text.split(',').map(str::trim) {
            let number = |s: &str| {
                s.trim().parse::<u64>().map_err(|_| {
                    format!(
                        "`{part}` is not a launch index or range \
                         (all, first, last, every:N, 0,5-9)"
                    )
                })
            };
            let range = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(part)?, number(part)?),
            };
            if range.0 > range.1 {
                return Err(format!("`{part}`: a range runs from low to high"));
            }
            ranges.push(range);
        }
        Ok(LaunchSelection::Indexes(ranges))
    }

    /// Whether launch `index` of the kernel is captured (for `last`, each
    /// is, until the next replaces it).
    pub fn takes(&self, index: u64) -> bool {
        match self {
            LaunchSelection::All | LaunchSelection::Last => true,
            LaunchSelection::Every(n) => index.is_multiple_of(*n),
            LaunchSelection::Indexes(ranges) => {
                ranges.iter().any(|(a, b)| (*a..=*b).contains(&index))
            }
        }
    }
}

/// The whole selection: kernel globs (none: every kernel), and rules
/// `[GLOB:]SPEC`, the first rule whose glob matches a kernel deciding its
/// launches; a rule without a glob covers kernels no other rule names, and
/// without one, all their launches are taken.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    kernels: Vec<String>,
    rules: Vec<(Option<String>, LaunchSelection)>,
}

/// Separates the rules in [`Selection::launches_text`] (no glob or spec
/// holds it).
const RULE_SEPARATOR: char = ';';

impl Selection {
    /// From `--kernel` globs and `--launches` rules.
    pub fn parse(kernels: &[String], launches: &[String]) -> Result<Selection, String> {
        let rules = launches
            .iter()
            .map(|rule| Self::rule(rule))
            .collect::<Result<_, _>>()?;
        Ok(Selection { kernels: kernels.to_vec(), rules })
    }

    /// `GLOB:SPEC` or `SPEC` (`every:N` is a spec, not a glob).
    fn rule(text: &str) -> Result<(Option<String>, LaunchSelection), String> {
        let text = text.trim();
        match text.split_once(':') {
            Some((glob, spec)) if glob != "every" => {
                if glob.is_empty() {
                    return Err(format!("`{text}`: the kernel before `:` is empty"));
                }
                Ok((Some(glob.to_string()), LaunchSelection::parse(spec)?))
            }
            _ => Ok((None, LaunchSelection::parse(text)?)),
        }
    }

    /// The rules as the layer reads them back ([`Selection::parse`] of
    /// the text split at `;`).
    pub fn launches_text(launches: &[String]) -> String {
        launches.join(&RULE_SEPARATOR.to_string())
    }

    /// [`Selection::parse`] of the environment's texts.
    pub fn from_texts(kernels: &str, launches: &str) -> Result<Selection, String> {
        let split = |text: &str, by: char| -> Vec<String> {
            text.split(by)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        Self::parse(&split(kernels, ','), &split(launches, RULE_SEPARATOR))
    }

    /// Which launches of `kernel` are taken; `None` where the kernel is not.
    pub fn of(&self, kernel: &str) -> Option<&LaunchSelection> {
        let named = self.kernels.is_empty() || self.kernels.iter().any(|g| glob_matches(g, kernel));
        if !named {
            return None;
        }
        let by_glob = self.rules.iter().find_map(|(glob, selection)| {
            glob.as_deref()
                .filter(|g| glob_matches(g, kernel))
                .map(|_| selection)
        });
        let default = self
            .rules
            .iter()
            .find_map(|(glob, selection)| glob.is_none().then_some(selection));
        Some(by_glob.or(default).unwrap_or(&LaunchSelection::All))
    }
}

/// Whether `name` matches a glob of `*` (any run) and `?` (one character).
pub fn glob_matches(glob: &str, name: &str) -> bool {
    fn go(g: &[char], n: &[char]) -> bool {
        match (g.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&g[1..], n) || (!n.is_empty() && go(g, &n[1..])),
            (Some('?'), Some(_)) => go(&g[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&g[1..], &n[1..]),
            _ => false,
        }
    }
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&g, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(selection: &LaunchSelection, upto: u64) -> Vec<u64> {
        (0..upto).filter(|i| selection.takes(*i)).collect()
    }

    #[test]
    fn selections_parse_and_take_their_launches() {
        assert_eq!(
            taken(&LaunchSelection::parse("every:3").unwrap(), 7),
            [0, 3, 6]
        );
        assert_eq!(
            taken(&LaunchSelection::parse("0,5-7").unwrap(), 10),
            [0, 5, 6, 7]
        );
        assert_eq!(taken(&LaunchSelection::parse("first").unwrap(), 3), [0]);
        assert_eq!(
            LaunchSelection::parse("last").unwrap(),
            LaunchSelection::Last
        );
        assert!(LaunchSelection::parse("every:0").is_err());
        assert!(LaunchSelection::parse("3-1").is_err());
        assert!(LaunchSelection::parse("x").is_err());
    }

    #[test]
    fn rules_apply_per_kernel_with_a_default_for_the_rest() {
        let rules = [
            "hash:0,5-9".to_string(),
            "gemm*:last".into(),
            "every:2".into(),
        ];
        let selection = Selection::parse(&[], &rules).unwrap();
        assert_eq!(taken(selection.of("hash").unwrap(), 12), [0, 5, 6, 7, 8, 9]);
        assert_eq!(selection.of("gemm_nn"), Some(&LaunchSelection::Last));
        assert_eq!(taken(selection.of("axpy").unwrap(), 5), [0, 2, 4]);
        // Through the environment and back.
        let again = Selection::from_texts("", &Selection::launches_text(&rules)).unwrap();
        assert_eq!(again, selection);
        // Kernel globs come first; no rule at all takes every launch.
        let only = Selection::from_texts("gemm*", "").unwrap();
        assert_eq!(only.of("hash"), None);
        assert_eq!(only.of("gemm_nn"), Some(&LaunchSelection::All));
        assert!(Selection::parse(&[], &[":3".into()]).is_err());
        assert!(Selection::parse(&[], &["hash:x".into()]).is_err());
    }

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_matches("hash", "hash"));
        assert!(glob_matches("h*", "hash"));
        assert!(glob_matches("*sh", "hash"));
        assert!(glob_matches("h?sh", "hash"));
        assert!(!glob_matches("h?", "hash"));
        assert!(!glob_matches("sgemm", "hash"));
    }
}
