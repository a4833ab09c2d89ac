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

/// `40 s`, `12 min`, `3.5 h`: a time estimate, to a sensible grain.
pub fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 5400.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_sensible_grain() {
        assert_eq!(duration(42.4), "42 s");
        assert_eq!(duration(95.0), "2 min");
        assert_eq!(duration(410.0), "7 min");
        assert_eq!(duration(12_600.0), "3.5 h");
    }

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
