//! Image and sampler arguments: parsed, checked against the kernel's
//! signature, materialised; errors at their line.

use crate::testing::Fixture;
use crate::IntegerSigns;
use clflow_core::{
    Access, AddressMode, ArgValue, FilterMode, ImageDim, KernelParam, KernelSignature, ParamKind,
    SamplerDesc,
};

const HEAD: &str = "source = \"k.cl\"\nkernel = \"blur\"\nglobal_size = [4, 2]\n";

const IMAGES: &str = r#"
[[arg]]
name = "src"
type = "image2d"
format = "RGBA/UNORM_INT8"
shape = [4, 2]
file = "in.rgba"
access = "ro"

[[arg]]
name = "s"
sampler = { normalized = true, address = "repeat", filter = "linear" }

[[arg]]
name = "dst"
type = "image2d"
format = "R/FLOAT"
shape = [4, 2]
fill = 0.5
access = "wo"
dump = true
"#;

fn signature(src_access: Access) -> KernelSignature {
    let image = |name: &str, access| KernelParam {
        name: Some(name.into()),
        kind: ParamKind::Image { dim: ImageDim::Image2d, access },
    };
    KernelSignature {
        name: "blur".into(),
        params: vec![
            image("src", src_access),
            KernelParam { name: Some("s".into()), kind: ParamKind::Sampler },
            image("dst", Access::WriteOnly),
        ],
    }
}

#[test]
fn images_and_samplers_load_check_and_materialise() {
    let fixture = Fixture::new();
    let texels: Vec<u8> = (0..32).collect();
    fixture.file("in.rgba", &texels);
    let manifest = fixture.load("m.toml", &format!("{HEAD}{IMAGES}")).unwrap();
    let checked = manifest
        .check(&signature(Access::ReadOnly), IntegerSigns::Declared)
        .unwrap();
    assert_eq!(checked.dumps().map(|(i, _)| i).collect::<Vec<_>>(), [2]);
    let launch = checked.materialize().unwrap();
    let ArgValue::Image { image, access, bytes } = &launch.args[0].value else {
        panic!("src is an image")
    };
    assert_eq!(
        (
            image.dim,
            image.format.to_string(),
            image.width,
            image.height
        ),
        (ImageDim::Image2d, "RGBA/UNORM_INT8".into(), 4, 2)
    );
    assert_eq!((*access, bytes), (Access::ReadOnly, &texels));
    assert_eq!(
        launch.args[1].value,
        ArgValue::Sampler(SamplerDesc {
            normalized: true,
            address: AddressMode::Repeat,
            filter: FilterMode::Linear
        })
    );
    let ArgValue::Image { bytes, access, .. } = &launch.args[2].value else {
        panic!("dst is an image")
    };
    assert_eq!(*access, Access::WriteOnly);
    assert_eq!(bytes, &0.5f32.to_le_bytes().repeat(8));
}

#[test]
fn an_image_must_match_the_kernel_and_its_file_the_shape() {
    let fixture = Fixture::new();
    fixture.file("in.rgba", &[0; 32]);
    let manifest = fixture.load("m.toml", &format!("{HEAD}{IMAGES}")).unwrap();
    let error = manifest
        .check(&signature(Access::WriteOnly), IntegerSigns::Declared)
        .unwrap_err()
        .to_string();
    assert!(error.contains(":5:"), "{error}");
    assert!(error.contains("arg 0 (src)"), "{error}");
    assert!(error.contains("make `access` \"wo\""), "{error}");

    fixture.file("in.rgba", &[0; 28]);
    let error = fixture.load_error("m.toml", &format!("{HEAD}{IMAGES}"));
    assert!(error.contains("DIR/m.toml:10: arg 0 (src)"), "{error}");
    assert!(
        error.contains("the image's shape makes 8 texels of 4 bytes (uchar4), but the file holds"),
        "{error}"
    );
}

#[test]
fn bad_formats_shapes_and_samplers_are_named_at_their_line() {
    let fixture = Fixture::new();
    let arg = |body: &str| format!("{HEAD}\n[[arg]]\nname = \"x\"\n{body}\n");
    let error = fixture.load_error(
        "m.toml",
        &arg("type = \"image2d\"\nformat = \"RGB/UNORM_INT8\"\nshape = [2, 2]"),
    );
    assert!(error.contains("DIR/m.toml:8: arg 0 (x)"), "{error}");
    assert!(
        error.contains("channel order `RGB` is not supported"),
        "{error}"
    );
    let error = fixture.load_error(
        "m.toml",
        &arg("type = \"image3d\"\nformat = \"R/FLOAT\"\nshape = [2, 2]"),
    );
    assert!(error.contains("DIR/m.toml:9: arg 0 (x)"), "{error}");
    assert!(
        error.contains("image3d takes a shape of 3 numbers"),
        "{error}"
    );
    let error = fixture.load_error("m.toml", &arg("sampler = { address = \"repeat\" }"));
    assert!(error.contains("needs normalized = true"), "{error}");
    let error = fixture.load_error("m.toml", &arg("sampler = { adress = \"clamp\" }"));
    assert!(error.contains("did you mean `address`?"), "{error}");
    let error = fixture.load_error("m.toml", &arg("type = \"uint\"\ncount = 4\nshape = [2, 2]"));
    assert!(
        error.contains("`shape` goes with an image's type"),
        "{error}"
    );
}
