"""Builds jax2onnx_cpp: the extension module _core from this CMake project.

`pip install --no-build-isolation ./python` (or `--target DIR`) configures the
project one directory up into python/build/cmake-TAG (Release, no tests,
-DJAX2ONNX_PYTHON=ON), builds the target jax2onnx_python and copies the
assembled package (the module, the .py files, tools/export_jaxpr.py and the
ONNX Runtime runner's files) into the wheel. Reuse an existing build tree
instead with JAX2ONNX_CMAKE_BUILD_DIR=/path/to/build (its build type is
kept). JAX2ONNX_BUILD_JOBS sets the parallelism (default: all CPUs).
"""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def _project_version() -> str:
  import re
  with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
    match = re.search(r"project\(jax2onnx VERSION ([0-9.]+)", f.read())
  return match.group(1) if match else "0.0.0"


class CMakeExtension(Extension):

  def __init__(self, name: str):
    super().__init__(name, sources=[])


class CMakeBuild(build_ext):

  def build_extension(self, ext: Extension) -> None:
    build_dir = os.environ.get("JAX2ONNX_CMAKE_BUILD_DIR")
    if build_dir:
      build_dir = os.path.abspath(build_dir)
      if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        raise RuntimeError(f"JAX2ONNX_CMAKE_BUILD_DIR={build_dir} is not a "
                           "configured CMake build tree")
      subprocess.check_call(["cmake", "-DJAX2ONNX_PYTHON=ON",
                             f"-DPython_EXECUTABLE={sys.executable}",
                             build_dir])
    else:
      build_dir = os.path.join(HERE, "build",
                               f"cmake-{sys.implementation.cache_tag}")
      configure = ["cmake", "-S", SOURCE, "-B", build_dir,
                   "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                   "-DJAX2ONNX_PYTHON=ON",
                   f"-DPython_EXECUTABLE={sys.executable}"]
      if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
      if shutil.which("ccache"):
        configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
      if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        subprocess.check_call(configure)
    jobs = os.environ.get("JAX2ONNX_BUILD_JOBS", str(os.cpu_count() or 2))
    subprocess.check_call(["cmake", "--build", build_dir, "--target",
                           "jax2onnx_python", "--parallel", jobs])
    package = os.path.join(build_dir, "python", "jax2onnx_cpp")
    target = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
    os.makedirs(target, exist_ok=True)
    modules = [n for n in os.listdir(package)
               if n.startswith("_core.") and n.endswith(".so")]
    if len(modules) != 1:
      raise RuntimeError(f"expected one _core*.so in {package}, got {modules}")
    shutil.copy2(os.path.join(package, modules[0]),
                 self.get_ext_fullpath(ext.name))
    for name in os.listdir(package):
      source = os.path.join(package, name)
      if name.endswith(".py"):
        shutil.copy2(source, os.path.join(target, name))
      elif name == "ort":
        shutil.copytree(source, os.path.join(target, name),
                        dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("node_modules"))


setup(
    name="jax2onnx_cpp",
    version=_project_version(),
    description="JAX functions and printed jaxprs to ONNX with the C++ "
    "jax2onnx converter",
    license="Apache-2.0",
    python_requires=">=3.10",
    # numpy is required (Debian: python3-numpy) but not declared: pip would
    # try to download it for `--target DIR` installs, which must work
    # offline.
    packages=["jax2onnx_cpp"],
    ext_modules=[CMakeExtension("jax2onnx_cpp._core")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
