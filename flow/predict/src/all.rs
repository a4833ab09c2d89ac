//! Every model for one kernel on one device, beside what was measured.

use crate::ape::ape;
use crate::boat_hull::{self, BoatHull};
use crate::device::{missing, DeviceRates, Rate};
use crate::energy::EnergyCoefficients;
use crate::json::{nan_if_null, op_class};
use crate::kernel::KernelFacts;
use crate::quantitative::{self, Quantitative};
use crate::roofline::{roofline_time, Bound, RooflineTime};
use clflow_counts::OpClass;
use serde::{Deserialize, Serialize};

/// The models, in the order reports list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Roofline,
    BoatHull,
    Quantitative,
    Energy,
    Clflow,
}

impl Model {
    pub const ALL: [Model; 5] = [
        Model::Roofline,
        Model::BoatHull,
        Model::Quantitative,
        Model::Energy,
        Model::Clflow,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Model::Roofline => "roofline bound",
            Model::BoatHull => "boat hull",
            Model::Quantitative => "quantitative roofline",
            Model::Energy => "energy roofline",
            Model::Clflow => "clflow model",
        }
    }
}

/// What was measured on the device, where it ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub time_s: Option<f64>,
    pub energy_j: Option<f64>,
}

/// The roofline bound with its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    #[serde(deserialize_with = "op_class")]
    pub class: OpClass,
    #[serde(deserialize_with = "nan_if_null")]
    pub work: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub bytes: f64,
    pub traffic: String,
    pub peak: Rate,
    pub bandwidth: Rate,
    #[serde(flatten)]
    pub time: RooflineTime,
}

/// The energy roofline's prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    pub coefficients: EnergyCoefficients,
    /// The time the constant power is charged over, and which it is.
    #[serde(deserialize_with = "nan_if_null")]
    pub time_s: f64,
    pub time_from: String,
    #[serde(deserialize_with = "nan_if_null")]
    pub energy_j: f64,
}

/// One model's outcome: its prediction, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome<T> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<T>,
    /// Predicted kernel time (energy in joules for the energy model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ape: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl<T> Outcome<T> {
    /// A model a record predates.
    fn not_recorded() -> Self {
        Outcome {
            prediction: None,
            value: None,
            ape: None,
            skipped: Some("not in this record".into()),
        }
    }

    fn of(result: Result<T, String>, value: impl Fn(&T) -> f64, measured: Option<f64>) -> Self {
        match result {
            Ok(prediction) => {
                let v = value(&prediction);
                Outcome {
                    value: Some(v),
                    ape: measured.and_then(|m| ape(v, m)),
                    prediction: Some(prediction),
                    skipped: None,
                }
            }
            Err(reason) => Outcome {
                prediction: None,
                value: None,
                ape: None,
                skipped: Some(reason),
            },
        }
    }
}

/// Every model for one kernel on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Predictions {
    pub kernel: String,
    pub device: String,
    pub measured: Measured,
    pub roofline: Outcome<Roofline>,
    pub boat_hull: Outcome<BoatHull>,
    pub quantitative: Outcome<Quantitative>,
    pub energy: Outcome<Energy>,
    /// clflow's own model (absent from records written before it).
    #[serde(default = "Outcome::not_recorded")]
    pub clflow: Outcome<crate::clflow::Clflow>,
}

/// One line of a summary: a model's predicted value and its error.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub model: Model,
    pub value: Option<f64>,
    pub ape: Option<f64>,
    pub bound: Option<Bound>,
    pub skipped: Option<String>,
}

impl Predictions {
    /// The models' outcomes in order, for tables.
    pub fn rows(&self) -> Vec<Row> {
        fn row<T>(model: Model, o: &Outcome<T>, bound: Option<Bound>) -> Row {
            Row {
                model,
                value: o.value,
                ape: o.ape,
                bound,
                skipped: o.skipped.clone(),
            }
        }
        vec![
            row(
                Model::Roofline,
                &self.roofline,
                self.roofline.prediction.as_ref().map(|p| p.time.bound),
            ),
            row(
                Model::BoatHull,
                &self.boat_hull,
                self.boat_hull.prediction.as_ref().map(|p| p.bound),
            ),
            row(
                Model::Quantitative,
                &self.quantitative,
                self.quantitative.prediction.as_ref().map(|p| p.bound),
            ),
            row(Model::Energy, &self.energy, None),
            row(
                Model::Clflow,
                &self.clflow,
                self.clflow.prediction.as_ref().map(|p| p.bound),
            ),
        ]
    }
}

/// The class whose peak the roofline bound divides W by: the float class
/// with the most work where floats outweigh integers, else int (as the
/// report's rooflines choose their ceiling).
fn roofline_class(facts: &KernelFacts) -> OpClass {
    let w = &facts.work_by_class;
    let floats = [
        (OpClass::Fp32, w.fp32),
        (OpClass::Fp64, w.fp64),
        (OpClass::Fp16, w.fp16),
    ];
    let (class, most) = floats
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .expect("three float classes");
    if w.fp32 + w.fp64 + w.fp16 > w.int && most > 0 {
        class
    } else {
        OpClass::Int
    }
}

fn roofline(facts: &KernelFacts, device: &DeviceRates) -> Result<Roofline, String> {
    let class = roofline_class(facts);
    let peak = device
        .peak
        .get(class)
        .cloned()
        .ok_or_else(|| missing(&format!("{} peak throughput", class.name()), device))?;
    let bandwidth = device
        .bandwidth
        .clone()
        .ok_or_else(|| missing("memory bandwidth", device))?;
    let (bytes, traffic) = facts.traffic.dram();
    let work = facts.work as f64;
    Ok(Roofline {
        class,
        work,
        bytes: bytes as f64,
        traffic: traffic.into(),
        time: roofline_time(work, peak.value, bytes as f64, bandwidth.value),
        peak,
        bandwidth,
    })
}

fn energy(
    facts: &KernelFacts,
    device: &DeviceRates,
    measured: &Measured,
    roofline: Option<&Roofline>,
) -> Result<Energy, String> {
    let coefficients = device.energy.clone().ok_or_else(|| {
        format!(
            "{} has no energy fit (no power sensor sampled its microbenchmarks)",
            device.name
        )
    })?;
    let (time_s, time_from) = match (measured.time_s, roofline) {
        (Some(t), _) => (t, "measured"),
        (None, Some(r)) => (r.time.time_s, "roofline bound"),
        (None, None) => return Err("no time to charge the constant power over".into()),
    };
    let bytes = facts.traffic.dram().0 as f64;
    Ok(Energy {
        energy_j: coefficients.energy(facts.work as f64, bytes, time_s),
        coefficients,
        time_s,
        time_from: time_from.into(),
    })
}

/// Runs every model for `facts` on `device`; errors against `measured`.
pub fn predict_all(facts: &KernelFacts, device: &DeviceRates, measured: Measured) -> Predictions {
    let roofline = Outcome::of(roofline(facts, device), |r| r.time.time_s, measured.time_s);
    let energy = Outcome::of(
        energy(facts, device, &measured, roofline.prediction.as_ref()),
        |e| e.energy_j,
        measured.energy_j,
    );
    Predictions {
        kernel: facts.name.clone(),
        device: device.name.clone(),
        boat_hull: Outcome::of(
            boat_hull::predict_kernel(facts, device),
            |b| b.time_s,
            measured.time_s,
        ),
        quantitative: Outcome::of(
            quantitative::predict_kernel(facts, device),
            |q| q.time_s,
            measured.time_s,
        ),
        clflow: Outcome::of(
            crate::clflow::predict_kernel(facts, device),
            |c| c.time_s,
            measured.time_s,
        ),
        roofline,
        energy,
        measured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::sgemm_facts;

    fn device() -> DeviceRates {
        let rate = |v: f64| Some(Rate::new(v, "test"));
        DeviceRates {
            name: "test device".into(),
            peak: crate::device::ClassRates {
                int: rate(100e9),
                fp32: rate(200e9),
                fp64: None,
                fp16: None,
            },
            mad: crate::device::ClassRates {
                int: rate(100e9),
                fp32: rate(200e9),
                fp64: None,
                fp16: None,
            },
            int_add: rate(50e9),
            ldst: rate(50e9),
            bandwidth: rate(20e9),
            uncoalesced_bandwidth: rate(2e9),
            host_link: rate(10e9),
            energy: None,
            notes: Vec::new(),
            ..DeviceRates::default()
        }
    }

    #[test]
    fn every_model_predicts_or_says_why_not() {
        let facts = sgemm_facts();
        let p = predict_all(
            &facts,
            &device(),
            Measured { time_s: Some(2e-6), energy_j: None },
        );
        // sgemm's integer work outweighs its floats: W / F̂_int against
        // the compulsory 12 KiB at 20 GB/s.
        let r = p.roofline.prediction.as_ref().unwrap();
        assert_eq!(r.class, OpClass::Int);
        assert_eq!(r.time.compute_s, 299_008.0 / 100e9);
        assert_eq!(r.time.memory_s, 12288.0 / 20e9);
        assert_eq!(p.roofline.value, Some(299_008.0 / 100e9));
        let ape = p.roofline.ape.unwrap();
        assert!((ape - (2.99008e-6 - 2e-6) / 2e-6).abs() < 1e-9);
        assert!(p.boat_hull.value.is_some() && p.quantitative.value.is_some());
        assert!(p.energy.skipped.as_ref().unwrap().contains("no energy fit"));
        let rows = p.rows();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[0].bound, Some(Bound::Compute));
        // clflow's model needs what only a measured device has.
        assert_eq!(rows[4].model, Model::Clflow);
        assert_eq!(
            rows[4].skipped.as_deref(),
            Some("test device has no SIMD width")
        );
        // A device without bandwidth: each model names what it lacks.
        let mut blind = device();
        blind.bandwidth = None;
        let p = predict_all(&facts, &blind, Measured::default());
        assert_eq!(
            p.roofline.skipped.as_deref(),
            Some("test device has no memory bandwidth")
        );
        assert!(p.quantitative.skipped.as_ref().unwrap().contains("B_mem"));
        assert_eq!(p.roofline.ape, None);
    }

    #[test]
    fn energy_charges_the_measured_time_else_the_bound() {
        let facts = sgemm_facts();
        let mut dev = device();
        dev.energy = Some(EnergyCoefficients {
            op_j: 1e-10,
            byte_j: 1e-9,
            constant_w: 10.0,
            rms_residual_w: 0.0,
            samples: 5,
            source: "test".into(),
        });
        let measured = Measured { time_s: Some(1e-3), energy_j: Some(0.02) };
        let p = predict_all(&facts, &dev, measured);
        let e = p.energy.prediction.as_ref().unwrap();
        let expected = 1e-10 * 299_008.0 + 1e-9 * 12288.0 + 10.0 * 1e-3;
        assert!((e.energy_j - expected).abs() < 1e-15);
        assert_eq!(e.time_from, "measured");
        assert!((p.energy.ape.unwrap() - (0.02 - expected).abs() / 0.02).abs() < 1e-12);
        let unmeasured = predict_all(&facts, &dev, Measured::default());
        assert_eq!(
            unmeasured.energy.prediction.unwrap().time_from,
            "roofline bound"
        );
    }

    fn energy_device() -> DeviceRates {
        DeviceRates {
            energy: Some(EnergyCoefficients {
                op_j: 1.3e-10,
                byte_j: 7.1e-10,
                constant_w: 11.5,
                rms_residual_w: 0.25,
                samples: 6,
                source: "test".into(),
            }),
            ..device()
        }
    }

    /// Written as `predictions.json` writes it, read back.
    fn round_trip(predictions: &[Predictions]) -> (String, Vec<Predictions>) {
        let text = serde_json::to_string_pretty(predictions).unwrap();
        let back: Vec<Predictions> = serde_json::from_str(&text).unwrap();
        (text, back)
    }

    #[test]
    fn predictions_read_back_from_the_json_they_are_written_as() {
        let facts = sgemm_facts();
        let measured = Measured { time_s: Some(2.7e-6), energy_j: Some(3.1e-5) };
        let mut blind = device();
        blind.bandwidth = None;
        let predictions = vec![
            predict_all(&facts, &energy_device(), measured),
            predict_all(&facts, &blind, Measured::default()),
        ];
        // Every model predicted on the first device, none but the boat
        // hull's memory side lacking on the second.
        let first = &predictions[0];
        let paper = first
            .rows()
            .into_iter()
            .filter(|r| r.model != Model::Clflow);
        assert!(paper.into_iter().all(|r| r.value.is_some()));
        assert!(predictions[1].roofline.skipped.is_some());
        let (text, back) = round_trip(&predictions);
        assert_eq!(back, predictions);
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
        // The format as written: the roofline time flattened beside its
        // inputs, classes and bounds by name, skipped outcomes without values.
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let roofline = &json[0]["roofline"]["prediction"];
        assert_eq!(roofline["class"], "int");
        assert_eq!(roofline["bound"], "compute");
        assert!(roofline["compute_s"].is_f64());
        assert_eq!(
            json[0]["quantitative"]["prediction"]["kernel"]["k_type"],
            "fp32"
        );
        assert_eq!(json[0]["energy"]["prediction"]["time_from"], "measured");
        assert!(json[1]["roofline"].get("value").is_none());
        // A record written before clflow's model reads back without it.
        let mut old = json.clone();
        old[0].as_object_mut().unwrap().remove("clflow");
        let back: Vec<Predictions> = serde_json::from_value(old).unwrap();
        assert_eq!(
            back[0].clflow.skipped.as_deref(),
            Some("not in this record")
        );
    }

    #[test]
    fn an_infinite_intensity_reads_back_infinite() {
        // No DRAM traffic: the quantitative roofline's O_krn is +inf, which
        // JSON holds as null.
        let mut facts = sgemm_facts();
        facts.traffic.compulsory = 0;
        let predictions = vec![predict_all(&facts, &device(), Measured::default())];
        let q = predictions[0].quantitative.prediction.as_ref().unwrap();
        assert_eq!(q.kernel_intensity, f64::INFINITY);
        let (text, back) = round_trip(&predictions);
        assert!(text.contains("\"kernel_intensity\": null"), "{text}");
        assert_eq!(back, predictions);
    }
}
