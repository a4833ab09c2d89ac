//! Plain text for the terminal: left-aligned tables and byte sizes, one way
//! for every command that prints them.

/// Left-aligned columns two spaces apart, trailing blanks trimmed; no header
/// line when `headers` is empty.
pub fn table(headers: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut all: Vec<Vec<String>> = Vec::new();
    if !headers.is_empty() {
        all.push(headers.iter().map(|h| h.to_string()).collect());
    }
    all.extend(rows);
    let columns = all.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            all.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &all {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            line += &format!("{cell:<width$}  ");
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

/// A size in binary units as a person reads it: `512 bytes`, `512 KiB`,
/// `7.7 GiB`.
pub fn binary_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(binary_size(512), "512 bytes");
        assert_eq!(binary_size(524_288), "512 KiB");
        assert_eq!(binary_size(8_268_546_048), "7.7 GiB");
    }

    #[test]
    fn tables_align_their_columns() {
        let text = table(
            &["A", "BB"],
            vec![vec!["long".into(), "x".into()], vec!["s".into(), "".into()]],
        );
        assert_eq!(text, "A     BB\nlong  x\ns\n");
    }
}
