//! The report on disk: every file, charts that parse and show the right
//! labels at the right places, a page that stands alone, and a failed write
//! that leaves the earlier report whole.

use clflow_metrics::{
    paper, CacheCeiling, Ceilings, DeviceProfile, Figure, KernelCounts, LevelTraffic, OpKind,
    ResultSet, Run, Unit,
};
use clflow_report::plot::{render_svg, Geometry};
use clflow_report::{device_roofline, write_report, Roof};
use std::path::Path;

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// All text of an SVG document, one string per <text> element.
fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn the_paper_report_has_every_file_and_label() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_report(&paper::lookup3(), dir.path()).unwrap();
    let stems = [
        "roofline-all",
        "perf-per-watt-all",
        "roofline-xeon-phi-5110p",
        "perf-per-watt-xeon-phi-5110p",
        "roofline-tesla-k20",
        "perf-per-watt-tesla-k20",
        "roofline-adm-pcie-7v3",
        "perf-per-watt-adm-pcie-7v3",
        "energy",
    ];
    for stem in stems {
        for ext in ["svg", "png"] {
            let name = format!("{stem}.{ext}");
            assert!(written.files.contains(&name), "{name} not written");
            assert!(dir.path().join(&name).is_file(), "{name} missing");
        }
        let png = std::fs::File::open(dir.path().join(format!("{stem}.png"))).unwrap();
        let info = png::Decoder::new(std::io::BufReader::new(png))
            .read_info()
            .unwrap();
        assert_eq!(
            (info.info().width, info.info().height),
            (1120, 660),
            "{stem}.png"
        );
    }
    // No staging directory is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".clflow-report-")
        })
        .collect();
    assert!(leftovers.is_empty());

    let k20 = svg_texts(&read(dir.path(), "roofline-tesla-k20.svg"));
    for label in [
        "Performance roofline – Tesla K20",
        "measured int 585 GOPS/s",
        "datasheet int 587 GOPS/s",
        "measured float 2903 GOPS/s",
        "measured 143 GB/s",
        "hash I = 3.335 OPS/B",
        "hash achieved 126.4 GOPS/s",
        "Operational intensity I (OPS/B)",
        "Performance F (GOPS/s)",
    ] {
        assert!(k20.iter().any(|t| t == label), "no `{label}` in {k20:?}");
    }
    let per_watt = svg_texts(&read(dir.path(), "perf-per-watt-tesla-k20.svg"));
    // Eq. 8: F̂_i/P̂ = 585/225 = 2.6; B̂/P̂ = 143/225 = 0.6356.
    for label in [
        "measured int 2.6 GOPS/s/W",
        "measured 0.6356 GB/s/W",
        "hash achieved 1.18 GOPS/s/W",
        "Performance per watt R (GOPS/s/W)",
    ] {
        assert!(
            per_watt.iter().any(|t| t == label),
            "no `{label}` in {per_watt:?}"
        );
    }
    let all = svg_texts(&read(dir.path(), "roofline-all.svg"));
    for label in [
        "Xeon Phi 5110P int peak 946 GOPS/s",
        "Tesla K20 bandwidth 143 GB/s",
        "ADM-PCIE-7V3 int peak 3032 GOPS/s",
        "ADM-PCIE-7V3 achieved 18.11 GOPS/s",
    ] {
        assert!(all.iter().any(|t| t == label), "no `{label}` in {all:?}");
    }
    let energy = svg_texts(&read(dir.path(), "energy.svg"));
    for label in ["3.221 J", "1.037 J", "1.2 J", "Tesla K20", "Energy E (J)"] {
        assert!(
            energy.iter().any(|t| t == label),
            "no `{label}` in {energy:?}"
        );
    }

    let html = read(dir.path(), "index.html");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page names an outside address"
    );
    assert_eq!(html.matches("<svg").count(), stems.len());
    assert!(html.contains("<table id=\"metrics\">") && html.contains("<table id=\"devices\">"));
    assert!(html.contains(">126.4 GOPS/s</td>") && html.contains(">1.18 GOPS/s/W</td>"));
    assert!(!html.contains("<img") && !html.contains("<script"));

    let csv = read(dir.path(), "metrics.csv");
    assert_eq!(csv.lines().count(), 4, "a header and one row per device");
    let json: serde_json::Value = serde_json::from_str(&read(dir.path(), "results.json")).unwrap();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["metrics"].as_array().unwrap().len(), 3);
}

/// One device, one kernel with round numbers: I = 2 OPS/B, F = 10 GOPS/s.
fn simple_case() -> ResultSet {
    let mut set = ResultSet::default();
    set.put_kernel(KernelCounts {
        kernel: "k".into(),
        ops: OpKind::Float,
        op_set: None,
        work: Figure::measured(2e9, Unit::Ops, "count"),
        traffic_accessed: Figure::measured(1e9, Unit::Bytes, "count"),
        traffic_compulsory: None,
        hotspots: Default::default(),
    });
    set.put_device(DeviceProfile {
        name: "dev".into(),
        kind: None,
        measured: Ceilings {
            float: Some(Figure::measured(100e9, Unit::OpsPerSecond, "bench")),
            bandwidth: Some(Figure::measured(20e9, Unit::BytesPerSecond, "bench")),
            power: Some(Figure::measured(50.0, Unit::Watts, "bench")),
            int: None,
            caches: Vec::new(),
        },
        datasheet: Ceilings::default(),
    });
    let mut run = Run::new("k", "dev");
    run.time = Some(Figure::measured(0.2, Unit::Seconds, "events"));
    run.power_peak = Some(Figure::measured(40.0, Unit::Watts, "sensor"));
    set.put_run(run);
    set
}

#[test]
fn the_achieved_marker_sits_at_i_and_f() {
    let set = simple_case();
    let metrics = set.evaluate();
    let on_device: Vec<_> = metrics.iter().collect();
    let plot = device_roofline(Roof::Performance, &set.devices[0], &on_device).unwrap();
    let (svg, geometry) = render_svg(&plot).unwrap();
    let geometry: Geometry = geometry.unwrap();
    // I 2 and ridge 100/20 = 5: from 2/3 to 5·2 → decades 0.1 to 10; F from
    // 0.1·20 = 2 up to 100·2.5 → 1 to 1000.
    assert_eq!(geometry.x_range, (0.1, 10.0));
    assert_eq!(geometry.y_range, (1.0, 1000.0));
    let (px, py) = geometry.pixel((2.0, 10.0));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let circles: Vec<(f64, f64)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .map(|n| {
            (
                n.attribute("cx").unwrap().parse().unwrap(),
                n.attribute("cy").unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert!(
        circles
            .iter()
            .any(|(x, y)| (x - px).abs() <= 2.0 && (y - py).abs() <= 2.0),
        "no marker near ({px}, {py}) in {circles:?}"
    );
    let texts = svg_texts(&svg);
    assert!(
        texts.iter().any(|t| t == "measured float 100 GOPS/s"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "k achieved 10 GOPS/s"),
        "{texts:?}"
    );
    // The gap to the roof above the point: attainable at I = 2 is 2 · 20 =
    // 40 GOPS/s, of which 10 is 25 %.
    assert!(texts.iter().any(|t| t == "25 % of attainable"), "{texts:?}");
}

/// With its traffic at each memory level, the device's roofline is
/// hierarchical: a point per level, named, and the achieved one at DRAM's
/// intensity, with the gap up to the roof there.
#[test]
fn memory_levels_make_the_roofline_hierarchical() {
    let mut set = simple_case();
    let mut run = set.runs[0].clone();
    let bytes = |b: f64| Figure::measured(b, Unit::Bytes, "simulation");
    // W = 2e9: I = 2 at L1, 8 at L2, 20 at DRAM (above the ridge of 5).
    run.levels = vec![
        LevelTraffic { level: "L1".into(), traffic: bytes(1e9) },
        LevelTraffic { level: "L2".into(), traffic: bytes(0.25e9) },
        LevelTraffic { level: "DRAM".into(), traffic: bytes(0.1e9) },
    ];
    set.put_run(run);
    // The L1's own ceiling, from reads within 16 KiB.
    let mut device = set.devices[0].clone();
    device.measured.caches = vec![CacheCeiling {
        level: "L1".into(),
        window_bytes: 16 << 10,
        bandwidth: Figure::measured(200e9, Unit::BytesPerSecond, "bench"),
    }];
    set.put_device(device);
    let metrics = set.evaluate();
    let levels: Vec<(String, f64)> = metrics[0]
        .levels
        .iter()
        .map(|l| (l.level.clone(), l.intensity.value))
        .collect();
    assert_eq!(
        levels,
        [
            ("L1".into(), 2.0),
            ("L2".into(), 8.0),
            ("DRAM".into(), 20.0)
        ]
    );
    let on_device: Vec<_> = metrics.iter().collect();
    let plot = device_roofline(Roof::Performance, &set.devices[0], &on_device).unwrap();
    let (svg, geometry) = render_svg(&plot).unwrap();
    let texts = svg_texts(&svg);
    for text in [
        "L1",
        "L2",
        "k achieved 10 GOPS/s (DRAM)",
        "10 % of attainable",
        "L1 200 GB/s",
        // The legend wraps its entry.
        "measured L1 bandwidth 200 GB/s (reads",
    ] {
        assert!(texts.iter().any(|t| t == text), "{text}: {texts:?}");
    }
    // The achieved marker at DRAM's intensity, 20 OPS/B.
    let (px, py) = geometry.unwrap().pixel((20.0, 10.0));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .any(|n| {
            let at = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (at("cx") - px).abs() <= 2.0 && (at("cy") - py).abs() <= 2.0
        }));
}

/// A kernel whose compulsory traffic is less than its accessed traffic has
/// two walls, each named for the Q it divides W by.
#[test]
fn the_walls_are_named_for_their_traffic() {
    let mut set = simple_case();
    let mut kernel = set.kernels[0].clone();
    kernel.traffic_compulsory = Some(Figure::measured(0.5e9, Unit::Bytes, "count"));
    set.put_kernel(kernel);
    let metrics = set.evaluate();
    let on_device: Vec<_> = metrics.iter().collect();
    let plot = device_roofline(Roof::Performance, &set.devices[0], &on_device).unwrap();
    let (svg, _) = render_svg(&plot).unwrap();
    let texts = svg_texts(&svg);
    for wall in ["k I accessed = 2 OPS/B", "k I compulsory = 4 OPS/B"] {
        assert!(texts.iter().any(|t| t == wall), "{wall}: {texts:?}");
    }
}

#[test]
fn a_failed_write_leaves_the_earlier_report_whole() {
    let dir = tempfile::tempdir().unwrap();
    write_report(&paper::lookup3(), dir.path()).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let csv_before = read(dir.path(), "metrics.csv");
    let html_before = read(dir.path(), "index.html");
    // A directory where the new report would put its energy chart.
    std::fs::remove_file(dir.path().join("energy.png")).unwrap();
    std::fs::create_dir(dir.path().join("energy.png")).unwrap();
    std::fs::remove_file(dir.path().join("energy.svg")).unwrap();

    let mut changed = paper::lookup3();
    changed.runs.truncate(1);
    let err = write_report(&changed, dir.path()).unwrap_err();
    assert!(
        err.to_string().contains("energy.png: is a directory"),
        "{err}"
    );
    assert_eq!(read(dir.path(), "metrics.csv"), csv_before);
    assert_eq!(read(dir.path(), "index.html"), html_before);
    assert_eq!(read(dir.path(), "notes.txt"), "mine");
    assert!(
        !dir.path().join("energy.svg").exists(),
        "a file of the failed report was moved in"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".clflow-report-")),
        "{names:?}"
    );
}
