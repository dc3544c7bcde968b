# lit configuration for tgc's FileCheck tests.
import os
import shutil
import sys

import lit.formats


def configure(config):
    config.name = "tgc"
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".tgc", ".test", ".json"]
    config.excludes = ["Inputs"]
    config.test_source_root = os.path.dirname(__file__)
    config.test_exec_root = os.path.join(config.tgc_obj_root, "test", "lit")
    config.substitutions.append(("%tgc", os.path.join(config.tgc_tools_dir, "tgc")))
    config.substitutions.append(("%FileCheck", os.path.join(config.llvm_tools_dir, "FileCheck")))
    config.substitutions.append(("%not", os.path.join(config.llvm_tools_dir, "not")))
    # The C/C++ compilers that check generated headers and link compiled models.
    config.substitutions.append(("%cxx", os.path.join(config.llvm_tools_dir, "clang++")))
    config.substitutions.append(("%cc", os.path.join(config.llvm_tools_dir, "clang")))
    config.substitutions.append(("%corpus", config.tgc_corpus_dir))
    # The runtime library a program links to map and bind external weights.
    # (first: %tgc would otherwise match its prefix)
    config.substitutions.insert(0, ("%tgc_runtime", os.path.join(config.tgc_obj_root, "lib", "Runtime", "libtgc_runtime.a")))
    config.substitutions.append(("%python", sys.executable))
    # Tests that run generated code say `REQUIRES: codegen` (off with TGC_ENABLE_CODEGEN=OFF).
    if config.tgc_codegen:
        config.available_features.add("codegen")
    # Tests of a cross target's executables say `REQUIRES: runtime-aarch64` (tgc has its runtime) and
    # `qemu-aarch64` (qemu-user runs them here).
    for triple in config.tgc_cross_targets:
        arch = triple.split("-")[0]
        config.available_features.add("runtime-" + arch)
        if shutil.which("qemu-" + arch):
            config.available_features.add("qemu-" + arch)
    if config.tgc_sanitize:
        # A sanitizer finding must abort: its default exit code 1 would pass as
        # an expected failure under `not`. Leak checking on. Options the
        # caller sets come last, so they win.
        defaults = {
            "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
            "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:print_stacktrace=1",
        }
        for var, value in defaults.items():
            given = os.environ.get(var)
            config.environment[var] = value + (":" + given if given else "")
        config.available_features.add("sanitizer")
    # tgc run/compile keep compiled kernels in the build tree, not the user's cache
    # (a test about the cache names its own with --cache-dir).
    config.environment["TGC_CACHE_DIR"] = os.path.join(config.tgc_obj_root, "test", "kernel-cache")
    path = [config.tgc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
    config.environment["PATH"] = os.pathsep.join(path)


if hasattr(config, "tgc_tools_dir"):
    configure(config)
else:
    # lit found this file by walking up from a test folder: load the site
    # config CMake wrote (it re-enters this file with the build paths set).
    site = lit_config.params.get("tgc_site_config")
    if not site:
        lit_config.fatal("run the suite through ctest, or pass --param tgc_site_config=<build>/test/lit/lit.site.cfg.py")
    lit_config.load_config(config, site)
