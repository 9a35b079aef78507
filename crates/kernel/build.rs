//! Builds the BPF programs in `bpf/` for the running kernel, and the same algorithm
//! sources for the host (the differential test's C side).
//!
//! Kernel objects: `vmlinux.h` is generated into OUT_DIR from the kernel's BTF
//! (`/sys/kernel/btf/vmlinux`, or `$CCLAB_VMLINUX_BTF`) with `bpftool btf dump ... format c`,
//! then each `bpf/*.bpf.c` is compiled with `clang -target bpf` (CO-RE). Nothing generated
//! is committed. If BTF, bpftool or clang is missing, the crate still builds (so the rest
//! of the workspace does) but without BPF objects: the `cclab kernel` commands then
//! fail with the reason recorded here (`CCLAB_BPF_UNAVAILABLE`), and a cargo warning says
//! so at build time.
//!
//! Host object: the same `.bpf.c` files compiled with `-DCCLAB_HOST` through
//! `bpf/host_shim.h` into a static library (any C compiler; the `cc` crate).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAMS: &[&str] = &["cclab_tuner", "cclab_cubic_fit"];

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let bpf_dir = Path::new("bpf");
    println!("cargo:rerun-if-changed=bpf");
    println!("cargo:rerun-if-env-changed=CCLAB_VMLINUX_BTF");
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo:rerun-if-env-changed=BPFTOOL");

    match build_bpf(&out, bpf_dir) {
        Ok(()) => println!("cargo:rustc-env=CCLAB_BPF_UNAVAILABLE="),
        Err(why) => {
            println!("cargo:warning=cclab-kernel: building without BPF programs: {why}");
            println!("cargo:rustc-env=CCLAB_BPF_UNAVAILABLE={why}");
            for p in PROGRAMS {
                // Empty placeholders so include_bytes! resolves; the loader refuses them.
                std::fs::write(out.join(format!("{p}.bpf.o")), b"").unwrap();
            }
        }
    }

    let mut host = cc::Build::new();
    host.define("CCLAB_HOST", None)
        .include(bpf_dir)
        .warnings(false)
        .flag_if_supported("-fno-strict-aliasing");
    host.file(bpf_dir.join("host_shim.c"));
    for p in PROGRAMS {
        host.file(bpf_dir.join(format!("{p}.bpf.c")));
    }
    host.compile("cclab_host");
}

fn build_bpf(out: &Path, bpf_dir: &Path) -> Result<(), String> {
    let btf = env::var("CCLAB_VMLINUX_BTF").unwrap_or_else(|_| "/sys/kernel/btf/vmlinux".into());
    if !Path::new(&btf).exists() {
        return Err(format!("no kernel BTF at {btf} (the kernel needs CONFIG_DEBUG_INFO_BTF=y; or set CCLAB_VMLINUX_BTF)"));
    }
    let bpftool = env::var("BPFTOOL").unwrap_or_else(|_| "bpftool".into());
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".into());

    let vmlinux = out.join("vmlinux.h");
    let dump = Command::new(&bpftool)
        .args(["btf", "dump", "file", &btf, "format", "c"])
        .output()
        .map_err(|e| format!("cannot run `{bpftool}` ({e}); install bpftool (Debian: apt-get install bpftool) or set BPFTOOL"))?;
    if !dump.status.success() {
        return Err(format!(
            "`{bpftool} btf dump file {btf} format c` failed: {}",
            String::from_utf8_lossy(&dump.stderr).trim()
        ));
    }
    std::fs::write(&vmlinux, &dump.stdout)
        .map_err(|e| format!("writing {}: {e}", vmlinux.display()))?;

    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86",
        Ok("aarch64") => "arm64",
        Ok("riscv64") => "riscv",
        Ok("s390x") => "s390",
        Ok(other) => return Err(format!("unsupported target architecture {other} for BPF")),
        Err(_) => "x86",
    };
    for p in PROGRAMS {
        let src = bpf_dir.join(format!("{p}.bpf.c"));
        let obj = out.join(format!("{p}.bpf.o"));
        let run = Command::new(&clang)
            .args(["-g", "-O2", "-target", "bpf", "-Wall", "-Wno-unused-function"])
            .arg(format!("-D__TARGET_ARCH_{arch}"))
            .arg("-I").arg(out)
            .arg("-I").arg(bpf_dir)
            .arg("-c").arg(&src)
            .arg("-o").arg(&obj)
            .output()
            .map_err(|e| format!("cannot run `{clang}` ({e}); install clang (Debian: apt-get install clang) or set CLANG"))?;
        if !run.status.success() {
            // A compile error in our own BPF source is a bug, not a missing tool: stop.
            panic!(
                "clang -target bpf failed on {}:\n{}",
                src.display(),
                String::from_utf8_lossy(&run.stderr)
            );
        }
    }
    Ok(())
}
