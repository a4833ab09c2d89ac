//! Checking an executor's output buffers against a case's reference.

use crate::expected::Location;
use crate::reference::expected_outputs;
use crate::{Case, CheckError};
use clflow_core::Launch;

/// Compares the outputs an executor produced for `launch` with what `case`'s
/// reference says they must be.
///
/// `produced[i]` holds argument i's buffer after the launch (`None` for
/// arguments the executor did not keep; every output the case writes must be
/// there). Integer outputs must match exactly, float outputs within the
/// case's bound; the first disagreement names the argument, the element,
/// the expected and the produced value.
pub fn check_outputs(
    case: Case,
    launch: &Launch,
    produced: &[Option<Vec<u8>>],
) -> Result<(), CheckError> {
    for output in expected_outputs(case, launch)? {
        let arg = launch.args[output.arg].describe(output.arg);
        let Some(Some(bytes)) = produced.get(output.arg) else {
            return Err(CheckError::MissingOutput { case: case.to_string(), arg });
        };
        let at = Location { case: case.name(), arg: &arg };
        output.expected.compare(bytes, at)?;
    }
    Ok(())
}
