# SPDX-License-Identifier: GPL-2.0
"""An mpi4py all-reduce over whatever transport mpirun picked (t_mpi runs
it over the sdr libfabric provider): MPI_Allreduce(SUM) of float32 vectors
(array.array buffers, no numpy) of 1 .. 1 Mi elements, every element
checked against the sum computed here (small integers: exact), and the
pickled allreduce of a Python object.  Rank 0 prints "ok ..." or
"not ok ..." per check; the exit status is 0 only if all passed."""
import sys
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failed = 0


def elem(r, i):
    return float((i * 11 + r * 17) % 997 - 498)


def verdict(name, ok):
    global failed
    ok = comm.allreduce(1 if ok else 0, op=MPI.MIN) == 1
    if rank == 0:
        print(("ok " if ok else "not ok ") + name, flush=True)
    if not ok:
        failed = 1


for count in (1, 1000, 1 << 18):
    send = array('f', (elem(rank, i) for i in range(count)))
    recv = array('f', [0.0]) * count
    comm.Allreduce([send, MPI.FLOAT], [recv, MPI.FLOAT], op=MPI.SUM)
    bad = [i for i in range(count)
           if recv[i] != sum(elem(r, i) for r in range(size))][:1]
    if bad:
        sys.stderr.write("rank %d: element %d: %g\n" % (rank, bad[0],
                                                         recv[bad[0]]))
    verdict("mpi4py Allreduce of %d float32" % count, not bad)

total = comm.allreduce({"rank": rank}["rank"] + 1, op=MPI.SUM)
verdict("mpi4py allreduce of Python ints", total == size * (size + 1) // 2)
sys.exit(failed)
