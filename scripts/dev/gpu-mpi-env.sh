# Sourced (bash) ON THE GPU MACHINE from the repository root: unpacks the OpenMPI that
# scripts/dev/gpu-pack.sh put in .carry/gpu-build/mpi-debs into /tmp/tilekit-mpi (once) and sets up this
# shell to build against it and run its mpirun from there, relocated: OPAL_PREFIX (OpenMPI finds its
# helpers, components and help files under it instead of /usr), PATH, LD_LIBRARY_PATH, MPI_HOME
# (CMake's FindMPI). Checked on the Debian machine with the installed OpenMPI hidden (mount
# namespace): a 2-rank MPI program built and ran from such an unpacked copy.
tilekit_mpi=/tmp/tilekit-mpi
if [ ! -x "$tilekit_mpi/usr/bin/orterun" ]; then
  mkdir -p "$tilekit_mpi"
  for d in .carry/gpu-build/mpi-debs/*.deb; do dpkg -x "$d" "$tilekit_mpi"; done
  # dpkg -x runs no maintainer scripts: the names update-alternatives would have made.
  for n in mpicxx mpicc mpirun mpiexec; do ln -sfn "$n.openmpi" "$tilekit_mpi/usr/bin/$n"; done
fi
export OPAL_PREFIX=$tilekit_mpi/usr MPI_HOME=$tilekit_mpi/usr
export PATH=$tilekit_mpi/usr/bin:$PATH
export LD_LIBRARY_PATH=$tilekit_mpi/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Root (the device machine's user): OpenMPI refuses root unless told.
[ "$(id -u)" != 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
