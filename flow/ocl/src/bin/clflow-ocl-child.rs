//! Helper process of clflow's OpenCL layer: runs one launch described in a
//! scratch directory (see `clflow_ocl::child`) on the OpenCL library its
//! environment selects, and writes the answer back there.

use clflow_core::Diagnostic;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: clflow-ocl-child REQUEST_DIR (started by clflow, not by hand)");
        return ExitCode::from(2);
    };
    match clflow_ocl::child::serve(std::path::Path::new(&dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("clflow-ocl-child: error: {err}");
            ExitCode::from(err.kind().exit_code())
        }
    }
}
