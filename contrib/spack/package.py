# Spack package recipe for HMPI. Copy this file to <repo>/packages/hmpi/package.py of a
# Spack repository (spack repo create / spack repo add), then:
#     spack install hmpi mpi=mpich ^mpich        or        spack install hmpi mpi=openmpi
# HMPI layers on one MPI through PMPI: the `mpi` variant names which, and the package
# depends on that provider. Programs then run with `hmpirun` from this package, or are
# linked with hmpicc / find_package(HMPI) / pkg-config hmpi.

from spack.package import *


class Hmpi(CMakePackage):
    """HMPI: a C library layered on MPICH or Open MPI (through PMPI) that gives the
    ranks of a node a shared heap (malloc interposed), so that intra-node messages,
    collectives and one-sided operations are copied once or not at all."""

    # Placeholders: set both to where the repository is published (or build a local
    # checkout with `spack dev-build hmpi@main` / `spack develop`).
    homepage = "https://example.org/hmpi"
    git = "https://example.org/hmpi.git"

    version("main", branch="main")

    variant(
        "mpi",
        default="mpich",
        values=("mpich", "openmpi"),
        multi=False,
        description="The MPI HMPI layers on",
    )
    variant("tests", default=False, description="Build the test suite")
    variant("bench", default=False, description="Build the benchmarks")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build")  # hmpifort, the Fortran entry points' tests
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mimalloc@2:")

    # The MPI below: the chosen provider, at MPI-3 or later.
    depends_on("mpich@3.3:", when="mpi=mpich")
    depends_on("openmpi@4:", when="mpi=openmpi")
    depends_on("mpi@3:")
    conflicts("^openmpi", when="mpi=mpich", msg="mpi=mpich builds over MPICH")
    conflicts("^mpich", when="mpi=openmpi", msg="mpi=openmpi builds over Open MPI")

    # Shared memory between processes, malloc interposition, process_vm_readv.
    requires("platform=linux", msg="HMPI needs Linux")

    def cmake_args(self):
        mpi = self.spec["mpi"]
        return [
            self.define_from_variant("HMPI_MPI", "mpi"),
            # The wrapper and launcher of the provider (HMPI looks for Debian's
            # mpicc.mpich / mpicc.openmpi first).
            self.define("HMPI_MPICC", mpi.mpicc),
            self.define("HMPI_MPIEXEC", join_path(mpi.prefix.bin, "mpiexec")),
            self.define_from_variant("HMPI_BUILD_TESTS", "tests"),
            self.define_from_variant("HMPI_BUILD_BENCH", "bench"),
        ]

    def setup_run_environment(self, env):
        env.prepend_path("MANPATH", self.prefix.share.man)

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_install(self):
        hmpi_info = Executable(self.prefix.bin.hmpi_info)
        out = hmpi_info(output=str)
        assert "HMPI" in out
