//! The last resort: the datasheet TDP, labelled `spec`. It is an upper bound
//! from a specification, not a measurement, and every output says so.

use super::{PowerSensor, PowerSource, PowerTrace, SensorError};
use std::time::Instant;

pub struct SpecSensor {
    tdp_w: f64,
    model: String,
    running: Option<(String, Instant)>,
}

impl SpecSensor {
    pub fn new(tdp_w: f64, model: &str) -> Self {
        SpecSensor { tdp_w, model: model.to_string(), running: None }
    }
}

impl PowerSensor for SpecSensor {
    fn source(&self) -> PowerSource {
        PowerSource::Spec
    }

    fn describe(&self) -> String {
        format!(
            "datasheet TDP of the {} ({} W), not a measurement",
            self.model, self.tdp_w
        )
    }

    fn start(&mut self, kernel: &str) -> Result<(), SensorError> {
        self.running = Some((kernel.to_string(), Instant::now()));
        Ok(())
    }

    fn stop(&mut self) -> Result<PowerTrace, SensorError> {
        let Some((kernel, started)) = self.running.take() else {
            return Err(SensorError::new(
                PowerSource::Spec,
                "stopped without a start",
            ));
        };
        Ok(PowerTrace {
            source: PowerSource::Spec,
            sensor: self.describe(),
            kernel,
            duration_s: started.elapsed().as_secs_f64(),
            samples: Vec::new(),
            peak_w: Some(self.tdp_w),
            mean_w: Some(self.tdp_w),
            energy_j: None,
            notes: vec!["spec: the datasheet TDP stands in for the device's power".into()],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_power_is_the_tdp_and_says_so() {
        let mut sensor = SpecSensor::new(225.0, "NVIDIA Tesla K20");
        sensor.start("triad").unwrap();
        let trace = sensor.stop().unwrap();
        assert_eq!(trace.source, PowerSource::Spec);
        assert_eq!(trace.peak_w, Some(225.0));
        assert!(trace.samples.is_empty());
        assert_eq!(trace.energy_j, None);
        assert_eq!(
            trace.sensor,
            "datasheet TDP of the NVIDIA Tesla K20 (225 W), not a measurement"
        );
    }
}
