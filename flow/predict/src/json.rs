//! How [`Predictions`](crate::Predictions) read back from the JSON they are
//! written as (`predictions.json`), so that a report can be redrawn from it.
//!
//! JSON has no NaN or infinity: serde_json writes a non-finite `f64` as
//! `null`. On reading back:
//!
//! * the quantitative roofline's `kernel_intensity` is +∞ for a kernel
//!   without DRAM traffic, the only non-finite value the model puts there,
//!   so `null` reads back as +∞ ([`infinity_if_null`]);
//! * any other plain `f64` is finite for positive, finite device rates; if a
//!   degenerate rate (0 ops/s) made one non-finite, its `null` reads back as
//!   NaN ([`nan_if_null`]), which the report's charts and tables skip as
//!   they skip any non-finite value, so the file still loads;
//! * an `Option<f64>` that held a non-finite number reads back as `None`.

use clflow_counts::OpClass;
use serde::de::{Deserializer, Error};
use serde::Deserialize;

/// A number, or NaN where `null` stands for a non-finite one.
pub(crate) fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A number, or +∞ where `null` stands for one.
pub(crate) fn infinity_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// An operation class by the name it is written as (`int`, `fp32` …).
pub(crate) fn op_class<'de, D: Deserializer<'de>>(d: D) -> Result<OpClass, D::Error> {
    const NAMES: &[&str] = &["int", "fp32", "fp64", "fp16"];
    let name = String::deserialize(d)?;
    OpClass::ALL
        .into_iter()
        .find(|class| class.name() == name)
        .ok_or_else(|| D::Error::unknown_variant(&name, NAMES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Probe {
        #[serde(deserialize_with = "nan_if_null")]
        nan: f64,
        #[serde(deserialize_with = "infinity_if_null")]
        inf: f64,
        #[serde(deserialize_with = "op_class")]
        class: OpClass,
    }

    #[test]
    fn nulls_read_back_as_the_non_finite_numbers_they_stand_for() {
        let p: Probe =
            serde_json::from_str(r#"{"nan": null, "inf": null, "class": "fp64"}"#).unwrap();
        assert!(p.nan.is_nan());
        assert_eq!(p.inf, f64::INFINITY);
        assert_eq!(p.class, OpClass::Fp64);
        let p: Probe = serde_json::from_str(r#"{"nan": 1.5, "inf": 2, "class": "int"}"#).unwrap();
        assert_eq!((p.nan, p.inf, p.class), (1.5, 2.0, OpClass::Int));
    }

    #[test]
    fn every_class_reads_back_from_its_written_name() {
        for class in OpClass::ALL {
            let text = serde_json::to_string(&class).unwrap();
            let back = op_class(&mut serde_json::Deserializer::from_str(&text)).unwrap();
            assert_eq!(back, class);
        }
        let err = serde_json::from_str::<Probe>(r#"{"nan": 1, "inf": 1, "class": "fp8"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `fp8`"), "{err}");
    }
}
