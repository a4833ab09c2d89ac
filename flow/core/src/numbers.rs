//! Numbers as every report writes them: counts with thousands separators,
//! measured values to four significant digits.

/// A cache line's size in bytes, as every door takes it (`--line-bytes`, a
/// suite's `line_bytes`, a cache's `SIZE/LINE`, a run's options): a power
/// of two, else the one line that says so.
pub fn line_size(bytes: u64) -> Result<u64, String> {
    if bytes.is_power_of_two() {
        Ok(bytes)
    } else {
        Err(format!("line size {bytes} is not a power of two (e.g. 64)"))
    }
}

/// `1234567` as `1,234,567`: counts of operations, bytes, lanes.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Four significant digits, trailing zeros dropped; whole numbers from 1000 up
/// ("2903", "476.2", "3.335", "0.38"): measured and derived values.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 1000.0 || magnitude == 0.0 {
        return format!("{value:.0}");
    }
    let decimals = (3 - magnitude.log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_group_by_thousands() {
        assert_eq!(group_digits(1234567), "1,234,567");
        assert_eq!(group_digits(12), "12");
    }

    #[test]
    fn values_keep_four_significant_digits() {
        assert_eq!(format_number(2903.4), "2903");
        assert_eq!(format_number(476.21), "476.2");
        assert_eq!(format_number(0.38), "0.38");
        assert_eq!(format_number(0.0), "0");
    }
}
