//! The one font every chart uses, embedded so that text renders on machines
//! with no system fonts (see `assets/README.md`).

use std::sync::OnceLock;

/// The family name charts ask for; SVG viewers fall back to their own sans-serif.
pub const FAMILY: &str = "sans-serif";

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");

/// Registers the embedded font with plotters, once per process.
pub fn ensure_registered() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded chart font could not be loaded".into())
    }
}
