//! The cases of the kernel corpus: one folder `kernels/<case>/` each.

use crate::CheckError;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// One case of the corpus, named as its folder under `kernels/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Case {
    Lookup3,
    Vadd,
    Triad,
    Sgemm,
    SgemmTiled,
    Stencil,
    Histogram,
    Reduction,
    Spmv,
    Nbody,
    SmithWaterman,
    Daxpy,
    McPi,
    GramSchmidt,
}

impl Case {
    pub const ALL: [Case; 14] = [
        Case::Lookup3,
        Case::Vadd,
        Case::Triad,
        Case::Sgemm,
        Case::SgemmTiled,
        Case::Stencil,
        Case::Histogram,
        Case::Reduction,
        Case::Spmv,
        Case::Nbody,
        Case::SmithWaterman,
        Case::Daxpy,
        Case::McPi,
        Case::GramSchmidt,
    ];

    /// The folder name under `kernels/`, also the `.cl` and default
    /// manifest's file stem.
    pub fn name(self) -> &'static str {
        match self {
            Case::Lookup3 => "lookup3",
            Case::Vadd => "vadd",
            Case::Triad => "triad",
            Case::Sgemm => "sgemm",
            Case::SgemmTiled => "sgemm-tiled",
            Case::Stencil => "stencil",
            Case::Histogram => "histogram",
            Case::Reduction => "reduction",
            Case::Spmv => "spmv",
            Case::Nbody => "nbody",
            Case::SmithWaterman => "smith-waterman",
            Case::Daxpy => "daxpy",
            Case::McPi => "mc-pi",
            Case::GramSchmidt => "gram-schmidt",
        }
    }

    /// The kernel function the case's manifests launch.
    pub fn kernel(self) -> &'static str {
        match self {
            Case::Lookup3 => "hash",
            Case::Vadd => "vadd",
            Case::Triad => "triad",
            Case::Sgemm => "sgemm",
            Case::SgemmTiled => "sgemm_tiled",
            Case::Stencil => "stencil5",
            Case::Histogram => "histogram",
            Case::Reduction => "reduce_sum",
            Case::Spmv => "spmv_csr",
            Case::Nbody => "nbody_step",
            Case::SmithWaterman => "smith_waterman",
            Case::Daxpy => "daxpy",
            Case::McPi => "mc_pi",
            Case::GramSchmidt => "gram_schmidt",
        }
    }

    /// The case a manifest belongs to: the folder it lies in
    /// (`kernels/lookup3/lookup3-paper.toml` is `lookup3`).
    pub fn of_manifest(path: &Path) -> Result<Case, CheckError> {
        let folder = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        folder.parse()
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Case {
    type Err = CheckError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Case::ALL
            .into_iter()
            .find(|case| case.name() == name)
            .ok_or_else(|| CheckError::UnknownCase {
                name: name.to_string(),
                known: Case::ALL.map(Case::name).join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for case in Case::ALL {
            assert_eq!(case.name().parse::<Case>().unwrap(), case);
        }
        let error = "lookup4".parse::<Case>().unwrap_err();
        assert!(error.to_string().contains("`lookup4` is not a case"));
    }

    #[test]
    fn a_manifest_belongs_to_its_folder() {
        let path = Path::new("kernels/lookup3/lookup3-paper.toml");
        assert_eq!(Case::of_manifest(path).unwrap(), Case::Lookup3);
        assert!(Case::of_manifest(Path::new("paper.toml")).is_err());
    }
}
