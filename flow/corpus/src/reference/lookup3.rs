//! lookup3: hashlittle of every key.

use super::{exact, index};
use crate::args::Args;
use crate::lookup3::{hashlittle, key_bytes, words_for};
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::{Launch, ScalarType};

/// hashes[k] = hashlittle(key k, initval); exact integer arithmetic.
pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Lookup3, launch, 5)?;
    let words = args.buffer::<u32>(0)?;
    let ids = args.global_ids(0);
    let offsets = args.buffer_of_len::<u32>(1, ids.end, "one offset per key (work-item)")?;
    let lengths = args.buffer_of_len::<u32>(2, ids.end, "one length per key (work-item)")?;
    let initval = args.scalar::<u32>(3)?;
    let mut hashes = args.buffer_of_len::<u32>(4, ids.end, "one hash per key (work-item)")?;
    for key in ids.map(index) {
        let start = offsets[key] as usize;
        let end = start + words_for(lengths[key]) as usize;
        if end > words.len() {
            return Err(args.bad(
                0,
                format!(
                    "key {key} ({} bytes at word {start}) ends past the {} words",
                    lengths[key],
                    words.len()
                ),
            ));
        }
        hashes[key] = hashlittle(&key_bytes(&words[start..end], lengths[key]), initval);
    }
    Ok(vec![exact(4, ScalarType::UInt, &hashes)])
}
