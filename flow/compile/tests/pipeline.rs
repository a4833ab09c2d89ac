//! The compile stage against the real toolchain (clang-15, llvm-spirv-15,
//! opt-15, spirv-val; `ci/test` installs them).

use clflow_compile::{CompileError, CompileRequest, Compiled, Compiler};
use clflow_core::Diagnostic;
use clflow_core::{AddressSpace, ElementType, KernelParam, ParamKind, StructMember, StructType};
use std::path::{Path, PathBuf};

struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        Workspace { dir: tempfile::tempdir().unwrap() }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn write_bytes(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn compiler(&self) -> Compiler {
        Compiler::discover()
            .expect("the compile toolchain (run ci/setup)")
            .with_cache_dir(Some(self.dir.path().join("cache")))
    }

    fn compile(&self, source: &Path, options: &str) -> Result<Compiled, CompileError> {
        self.compiler()
            .compile(&CompileRequest::new(source, options))
    }
}

const SIGNATURE_KERNEL: &str = "\
typedef uint hash_t;
typedef struct { float x; int y; } pair_t;
__kernel void scale(__global const uint *in, __global float4 *out, __local int *scratch,
                    __constant float *coef, hash_t n, int m, float4 s, char c,
                    __global pair_t *pairs, ulong big) {
  size_t i = get_global_id(0);
  scratch[get_local_id(0)] = in[i] + m;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i] = s * coef[0] + (float)scratch[0] + n + c + pairs[i].x + big;
}
__kernel void fill(__global short *a) { a[get_global_id(0)] = -1; }
";

fn param(name: &str, kind: ParamKind) -> KernelParam {
    KernelParam { name: Some(name.into()), kind }
}

fn global(ty: &str) -> ParamKind {
    pointer(AddressSpace::Global, Some(ty))
}

fn pointer(space: AddressSpace, ty: Option<&str>) -> ParamKind {
    ParamKind::Pointer {
        space,
        pointee: ty.map(|t| t.parse::<ElementType>().unwrap()),
        pointee_struct: None,
    }
}

/// A `__global` pointer to the struct `name` of `size` bytes whose members
/// are (offset, element, count), as the module lays them out.
fn global_struct(name: &str, size: usize, members: &[(usize, &str, usize)]) -> ParamKind {
    let members = members
        .iter()
        .map(|&(offset_bytes, element, count)| {
            let element = element.parse::<ElementType>().unwrap();
            StructMember {
                offset_bytes,
                size_bytes: element.size_bytes() * count,
                element: Some(element),
                count,
            }
        })
        .collect();
    ParamKind::Pointer {
        space: AddressSpace::Global,
        pointee: None,
        pointee_struct: Some(StructType { name: name.into(), size_bytes: Some(size), members }),
    }
}

fn value(ty: &str) -> ParamKind {
    ParamKind::Scalar { ty: ty.parse().unwrap() }
}

#[test]
fn reflection_recovers_the_source_signature() {
    let ws = Workspace::new();
    let source = ws.write("scale.cl", SIGNATURE_KERNEL);
    let compiled = ws.compile(&source, "").unwrap();
    assert!(!compiled.from_cache && !compiled.fallback_used);
    assert_eq!(&compiled.spirv[..4], &0x0723_0203u32.to_le_bytes());

    let module = clflow_spirv::load(&compiled.spirv).unwrap();
    let kernels = clflow_spirv::reflect_kernels(&module).unwrap();
    let names: Vec<&str> = kernels.iter().map(|k| k.signature.name.as_str()).collect();
    assert_eq!(names, ["scale", "fill"]);
    assert_eq!(
        kernels[0].signature.params,
        [
            param("in", global("uint")),
            param("out", global("float4")),
            param("scratch", pointer(AddressSpace::Local, Some("int"))),
            param("coef", pointer(AddressSpace::Constant, Some("float"))),
            param("n", value("uint")),
            param("m", value("int")),
            param("s", value("float4")),
            param("c", value("char")),
            param(
                "pairs",
                global_struct("pair_t", 8, &[(0, "float", 1), (4, "uint", 1)])
            ),
            param("big", value("ulong")),
        ]
    );
    assert_eq!(kernels[1].signature.params, [param("a", global("short"))]);
    assert_eq!(
        kernels[0].declaration(),
        "__kernel void scale(__global const uint* in, __global float4* out, __local int* scratch, \
         __constant const float* coef, hash_t n /* uint */, int m, float4 s, char c, \
         __global pair_t* pairs, ulong big)"
    );

    let summary = clflow_spirv::summary(&module);
    assert_eq!(summary.spirv_version, "1.0");
    assert_eq!(summary.size_bytes, compiled.spirv.len());
    assert_eq!(summary.ext_inst_imports, ["OpenCL.std"]);
    assert!(summary.capabilities.iter().any(|c| c == "Kernel"));
}

const STRUCT_KERNEL: &str = "\
typedef struct { float4 pos; float mass; int id; } Body;
struct Node { int key; uint next; float weight; char tag[3]; };
typedef struct Node node_t;
__kernel void step(__global Body *bodies, __global struct Node *nodes,
                   __global const node_t *aliased, float dt) {
  size_t i = get_global_id(0);
  bodies[i].pos += dt * bodies[i].mass;
  nodes[i].key += aliased[nodes[i].next].key + bodies[i].id;
}
__kernel void untouched(__global struct Node *nodes) {}
";

/// Pointers to structs name them as the source does (tag or typedef), with
/// clang's layout: Body's float4 aligns it to 16, so 24 bytes of members
/// take 32, the last 8 a padding member clang adds.
#[test]
fn struct_pointers_reflect_their_names_and_layouts() {
    let ws = Workspace::new();
    let source = ws.write("structs.cl", STRUCT_KERNEL);
    let compiled = ws.compile(&source, "").unwrap();
    let module = clflow_spirv::load(&compiled.spirv).unwrap();
    let kernels = clflow_spirv::reflect_kernels(&module).unwrap();
    let body = global_struct(
        "Body",
        32,
        &[
            (0, "float4", 1),
            (16, "float", 1),
            (20, "uint", 1),
            (24, "uchar", 8),
        ],
    );
    let node = |name| {
        global_struct(
            name,
            16,
            &[
                (0, "uint", 1),
                (4, "uint", 1),
                (8, "float", 1),
                (12, "uchar", 3),
            ],
        )
    };
    assert_eq!(
        kernels[0].signature.params,
        [
            param("bodies", body),
            param("nodes", node("struct Node")),
            param("aliased", node("node_t")),
            param("dt", value("float")),
        ]
    );
    // A parameter the kernel never uses keeps its struct.
    assert_eq!(
        kernels[1].signature.params,
        [param("nodes", node("struct Node"))]
    );
    assert_eq!(
        kernels[0].declaration(),
        "__kernel void step(__global Body* bodies, __global struct Node* nodes, \
         __global const node_t* aliased, float dt)"
    );
}

#[test]
fn narrowed_switch_compiles_through_the_fallback() {
    let ws = Workspace::new();
    let source = ws.write(
        "switch.cl",
        "__kernel void pick(__global uint *out) {
           size_t i = get_global_id(0);
           uint v;
           switch (get_global_id(0) & 3) {
             case 0: v = 10; break;
             case 1: v = 20; break;
             case 2: v = 35; break;
             default: v = 47; break;
           }
           out[i] = v * (uint)i;
         }",
    );
    let compiled = ws.compile(&source, "").unwrap();
    assert!(
        compiled.fallback_used,
        "-O2 narrows this switch; the fallback must have built it"
    );
    let module = clflow_spirv::load(&compiled.spirv).unwrap();
    let kernels = clflow_spirv::kernels(&module).unwrap();
    assert_eq!(kernels.len(), 1);
    assert_eq!(
        kernels[0].to_string(),
        "__kernel void pick(__global uint* out)"
    );

    // The cache remembers how it was built.
    let again = ws.compile(&source, "").unwrap();
    assert!(again.from_cache && again.fallback_used);
    assert_eq!(again.spirv, compiled.spirv);
}

/// A `freeze` (-O2 freezes the dividend of a division whose remainder it
/// then computes by multiplying back), which llvm-spirv-15 cannot
/// translate: written as a copy, the -O2 module builds.
#[test]
fn a_freeze_is_written_as_a_copy_and_the_o2_module_kept() {
    let ws = Workspace::new();
    let freeze = ws.write(
        "freeze.cl",
        "__kernel void divmod(__global const uint *in, __global uint *out, uint w) {
           uint i = get_global_id(0);
           out[i] = (in[i] / w) * (in[i] % w);
         }",
    );
    let compiled = ws.compile(&freeze, "").unwrap();
    assert!(!compiled.fallback_used, "the -O2 module builds");
    let module = clflow_spirv::load(&compiled.spirv).unwrap();
    assert_eq!(clflow_spirv::kernels(&module).unwrap()[0].name, "divmod");
}

/// Loop nests whose -O2 blocks llvm-spirv-15 writes before their dominators
/// (a loop behind a guard; a triangular nest): the blocks are put in order
/// and the -O2 module is kept, where before only the fallback built them.
#[test]
fn blocks_written_before_their_dominators_are_put_in_order() {
    let ws = Workspace::new();
    let guarded_loop = ws.write(
        "guard.cl",
        "__kernel void mm(__global const float *a, __global const float *b, __global float *c, uint n) {
           uint row = get_global_id(1), col = get_global_id(0);
           if (row < n && col < n) {
             float acc = 0.0f;
             for (uint k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
             c[row * n + col] = acc;
           }
         }",
    );
    let triangular = ws.write(
        "tri.cl",
        "__kernel void tri(__global float *a, __global float *r, int n) {
           __global float *m = a + get_global_id(0) * n * n;
           for (int k = 0; k < n; k++)
             for (int j = 0; j < k; j++) {
               float d = 0.0f;
               for (int i = 0; i < n; i++) d += m[j * n + i] * m[k * n + i];
               r[j * n + k] = d;
               for (int i = 0; i < n; i++) m[k * n + i] -= d * m[j * n + i];
             }
         }",
    );
    for (source, kernel) in [(&guarded_loop, "mm"), (&triangular, "tri")] {
        let compiled = ws.compile(source, "").unwrap();
        assert!(!compiled.fallback_used, "{kernel}: the -O2 module is kept");
        let module = clflow_spirv::load(&compiled.spirv).unwrap();
        assert_eq!(clflow_spirv::kernels(&module).unwrap()[0].name, kernel);
        assert_eq!(clflow_spirv::order_blocks(&compiled.spirv).unwrap(), None);
    }
}

/// A helper declared C99 `inline` without `static` that clang does not
/// inline is defined (GNU89 semantics, as drivers compile it); a call to a
/// function the source never defines is an error at compile time.
#[test]
fn inline_helpers_are_defined_and_undefined_calls_refused() {
    let ws = Workspace::new();
    let inline = ws.write(
        "inline.cl",
        "inline float sq(float x) { return x * x; }
         __kernel void k(__global float *a) { size_t i = get_global_id(0); a[i] = sq(a[i]); }",
    );
    // -cl-opt-disable keeps the call, as the fallback's -O0 build does.
    for options in ["", "-cl-opt-disable"] {
        let compiled = ws.compile(&inline, options).unwrap();
        let module = clflow_spirv::load(&compiled.spirv).unwrap();
        assert!(
            clflow_spirv::undefined_calls(&module).is_empty(),
            "{options}"
        );
    }
    let undefined = ws.write(
        "undefined.cl",
        "float helper(float x);
         __kernel void k(__global float *a) { size_t i = get_global_id(0); a[i] = helper(a[i]); }",
    );
    let error = ws.compile(&undefined, "").unwrap_err();
    assert_eq!(error.kind(), clflow_core::FailureKind::Input);
    assert!(
        error
            .to_string()
            .contains("calls `helper`, which it declares but never defines"),
        "{error}"
    );
}

#[test]
fn cache_follows_source_headers_and_options() {
    let ws = Workspace::new();
    ws.write("scale.h", "#define SCALE 2\n");
    let source = ws.write(
        "k.cl",
        "#include \"scale.h\"\n__kernel void k(__global int *a) { a[get_global_id(0)] *= SCALE * FACTOR; }\n",
    );
    let first = ws.compile(&source, "-D FACTOR=3").unwrap();
    assert!(!first.from_cache);
    let second = ws.compile(&source, "-D FACTOR=3").unwrap();
    assert!(second.from_cache);
    assert_eq!(
        (second.cache_key.as_str(), &second.spirv),
        (first.cache_key.as_str(), &first.spirv)
    );

    let other_option = ws.compile(&source, "-D FACTOR=5").unwrap();
    assert!(!other_option.from_cache);
    assert_ne!(other_option.cache_key, first.cache_key);

    ws.write("scale.h", "#define SCALE 7\n");
    let new_header = ws.compile(&source, "-D FACTOR=3").unwrap();
    assert!(!new_header.from_cache, "an edited header must rebuild");
    assert_ne!(new_header.cache_key, first.cache_key);

    let bypass = ws
        .compiler()
        .compile(&CompileRequest {
            use_cache: false,
            ..CompileRequest::new(&source, "-D FACTOR=3")
        })
        .unwrap();
    assert!(!bypass.from_cache);
    assert_eq!(bypass.cache_key, new_header.cache_key);
}

#[test]
fn a_corrupt_cache_entry_is_rebuilt() {
    let ws = Workspace::new();
    let source = ws.write("k.cl", "__kernel void k(__global int *a) { a[0] = 1; }\n");
    let first = ws.compile(&source, "").unwrap();
    let entry = ws
        .dir
        .path()
        .join("cache")
        .join(format!("{}.spv-entry", first.cache_key));
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, &bytes[..bytes.len() - 8]).unwrap();
    let rebuilt = ws.compile(&source, "").unwrap();
    assert!(!rebuilt.from_cache);
    assert_eq!(rebuilt.spirv, first.spirv);
    assert_eq!(
        std::fs::read(&entry).unwrap(),
        bytes,
        "the entry is whole again"
    );
}

#[test]
fn clang_diagnostics_name_the_file_as_given() {
    let ws = Workspace::new();
    let source = ws.write(
        "broken.cl",
        "__kernel void k(__global int *a) {\n  a[0] = 1\n}\n",
    );
    match ws.compile(&source, "") {
        Err(err @ CompileError::Diagnostics { .. }) => {
            let expected = format!(
                "{}:2:11: error: expected ';' after expression",
                source.display()
            );
            assert_eq!(err.to_string(), expected);
            assert_eq!(err.kind().exit_code(), 2);
        }
        other => panic!("expected diagnostics, got {other:?}"),
    }
}

#[test]
fn input_mistakes_are_input_errors() {
    let ws = Workspace::new();
    let missing = ws.dir.path().join("nope.cl");
    let err = ws.compile(&missing, "").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read kernel source `{}`: No such file or directory",
            missing.display()
        )
    );
    assert_eq!(err.kind().exit_code(), 2);

    let source = ws.write("k.cl", "__kernel void k(__global int *a) { a[0] = 1; }\n");
    let err = ws.compile(&source, "-O3").unwrap_err();
    assert!(
        matches!(&err, CompileError::BadBuildOption { option, .. } if option == "-O3"),
        "{err:?}"
    );
    assert_eq!(err.kind().exit_code(), 2);

    let err = ws.compile(&source, "-cl-std=CL9.9").unwrap_err();
    assert_eq!(
        err.to_string(),
        "error: invalid value 'CL9.9' in '-cl-std=CL9.9'"
    );
}

#[test]
fn concurrent_compiles_share_the_cache_safely() {
    let ws = Workspace::new();
    let source = ws.write(
        "k.cl",
        "__kernel void k(__global float *a) { a[get_global_id(0)] *= 2.0f; }\n",
    );
    let compiler = ws.compiler();
    let results: Vec<Compiled> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| compiler.compile(&CompileRequest::new(&source, "")).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(results.iter().all(|r| r.spirv == results[0].spirv));
    let cached = compiler.compile(&CompileRequest::new(&source, "")).unwrap();
    assert!(cached.from_cache);
    assert_eq!(cached.spirv, results[0].spirv);
    // (Beside them, `memos/`: the tools' versions.)
    let entries = std::fs::read_dir(ws.dir.path().join("cache"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != "memos")
        .count();
    assert_eq!(entries, 1, "one entry, no temporary files left behind");
}

/// Every word of a real module overwritten in turn: loading, reflecting and
/// summarising give a result or an error, never a panic.
#[test]
fn corrupted_real_modules_never_panic() {
    let ws = Workspace::new();
    let source = ws.write("scale.cl", SIGNATURE_KERNEL);
    let spirv = ws.compile(&source, "").unwrap().spirv;
    let patterns = [0u32, 0xffff_ffff, 0x0001_0000, 0x0004_0047];
    let mut failures = 0;
    for at in (5..spirv.len() / 4).map(|w| w * 4) {
        for pattern in patterns {
            let mut corrupt = spirv.clone();
            corrupt[at..at + 4].copy_from_slice(&pattern.to_le_bytes());
            match clflow_spirv::load(&corrupt) {
                Ok(module) => {
                    let _ = clflow_spirv::reflect_kernels(&module);
                    let _ = clflow_spirv::summary(&module);
                }
                Err(_) => failures += 1,
            }
        }
    }
    assert!(failures > 0, "some corruptions must be caught");
}

/// A kernel file is what its contents say: OpenCL C under any name, a
/// SPIR-V module (by its magic number) taken as it is, anything else
/// refused at once.
#[test]
fn spirv_modules_and_sources_of_any_name_are_told_by_their_contents() {
    let ws = Workspace::new();
    let text = ws.write(
        "kernel.txt",
        "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }",
    );
    let compiled = ws.compile(&text, "").unwrap();
    assert!(!compiled.given_module);
    let module = ws.dir.path().join("twice.bin");
    std::fs::write(&module, &compiled.spirv).unwrap();
    let taken = ws.compile(&module, "-DUNUSED=1").unwrap();
    assert!(taken.given_module && !taken.from_cache);
    assert_eq!(taken.spirv, compiled.spirv);
    assert_eq!(taken.notes.len(), 1, "build options are said to be unused");
    let kernels = clflow_spirv::kernels(&clflow_spirv::load(&taken.spirv).unwrap()).unwrap();
    assert_eq!(kernels[0].name, "twice");

    for (path, says) in [
        (Path::new("/dev/zero"), "nor OpenCL C text (byte 0 is NUL)"),
        (
            &ws.write_bytes("cut.spv", &compiled.spirv[..40]),
            "not a SPIR-V module clflow can read: truncated",
        ),
    ] {
        let error = ws.compile(path, "").unwrap_err();
        assert_eq!(error.kind(), clflow_core::FailureKind::Input, "{error}");
        assert!(error.to_string().contains(says), "{error}");
    }
}

/// Sets `path`'s modification time `seconds_ago`: a settled file, whose
/// stamp the compile stage trusts.
fn age(path: &Path, seconds_ago: u64) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(seconds_ago);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn a_settled_source_is_not_preprocessed_again_until_a_header_changes() {
    let ws = Workspace::new();
    let header = ws.write("scale.h", "#define SCALE 2\n");
    let source = ws.write(
        "k.cl",
        "#include \"scale.h\"\n__kernel void k(__global int *a) { a[get_global_id(0)] *= SCALE; }\n",
    );
    age(&header, 60);
    age(&source, 60);
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let compiler = |said: &std::sync::Arc<std::sync::Mutex<Vec<String>>>| {
        let said = said.clone();
        ws.compiler()
            .with_trace(move |line| said.lock().unwrap().push(line.to_string()))
    };
    let preprocessed = |said: &std::sync::Arc<std::sync::Mutex<Vec<String>>>| {
        said.lock().unwrap().iter().any(|l| l.contains(" -E "))
    };
    let first = compiler(&said)
        .compile(&CompileRequest::new(&source, ""))
        .unwrap();
    assert!(preprocessed(&said));
    said.lock().unwrap().clear();
    let second = compiler(&said)
        .compile(&CompileRequest::new(&source, ""))
        .unwrap();
    assert!(second.from_cache);
    assert!(!preprocessed(&said), "{:?}", said.lock().unwrap());
    assert_eq!(second.cache_key, first.cache_key);

    // The same size, another value, another time: the header's stamp
    // changed, so the source is preprocessed and the module rebuilt.
    ws.write("scale.h", "#define SCALE 7\n");
    age(&header, 30);
    said.lock().unwrap().clear();
    let edited = compiler(&said)
        .compile(&CompileRequest::new(&source, ""))
        .unwrap();
    assert!(preprocessed(&said));
    assert!(!edited.from_cache);
    assert_ne!(edited.cache_key, first.cache_key);
}
