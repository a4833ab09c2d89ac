//! Buffer files as they lie on disk: a raw image, or one compressed with
//! gzip (`.gz`), as captures store buffers where compression pays.

use flate2::read::GzDecoder;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Whether `path` names a gzip-compressed image (by its `.gz` extension).
pub fn is_compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// The file's data, decompressed where it is compressed.
pub fn open(path: &Path) -> std::io::Result<Box<dyn Read>> {
    let file = BufReader::new(File::open(path)?);
    Ok(match is_compressed(path) {
        true => Box::new(GzDecoder::new(file)),
        false => Box::new(file),
    })
}

/// How many bytes of data the file holds (decompressing it to count them:
/// gzip's own size field wraps at 4 GiB).
pub fn data_len(path: &Path) -> std::io::Result<u64> {
    if !is_compressed(path) {
        return Ok(std::fs::metadata(path)?.len());
    }
    std::io::copy(&mut open(path)?, &mut std::io::sink())
}

/// The file's whole data.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use std::io::Write;

    #[test]
    fn a_compressed_file_reads_as_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let plain = dir.path().join("b.bin");
        std::fs::write(&plain, &data).unwrap();
        let packed = dir.path().join("b.bin.gz");
        let mut encoder = GzEncoder::new(File::create(&packed).unwrap(), Default::default());
        encoder.write_all(&data).unwrap();
        encoder.finish().unwrap();
        assert!(std::fs::metadata(&packed).unwrap().len() < data.len() as u64 / 10);
        for path in [&plain, &packed] {
            assert_eq!(data_len(path).unwrap(), 40_000);
            assert_eq!(read(path).unwrap(), data);
        }
        // A file that says .gz but is not one is an error, not data.
        let fake = dir.path().join("c.bin.gz");
        std::fs::write(&fake, &data).unwrap();
        assert!(read(&fake).is_err());
    }
}
