/* Counts the MPI collectives a process calls (PMPI interposition: LD_PRELOAD this library) and
 * writes them to $SLIMTRAIN_MPI_COUNT_DIR/rank-<world rank>.txt at MPI_Finalize. The e2e tier
 * counts a training step's collectives from outside the program with it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ALLREDUCE, BCAST, BARRIER, ALLGATHER, OTHER, KINDS };
static const char* const names[KINDS] = {"allreduce", "bcast", "barrier", "allgather", "other"};
static long counts[KINDS];

static void count(int kind) {
  __atomic_add_fetch(&counts[kind], 1, __ATOMIC_RELAXED);
}

int MPI_Allreduce(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  count(ALLREDUCE);
  return PMPI_Allreduce(in, out, n, type, op, comm);
}

int MPI_Bcast(void* data, int n, MPI_Datatype type, int root, MPI_Comm comm) {
  count(BCAST);
  return PMPI_Bcast(data, n, type, root, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  count(BARRIER);
  return PMPI_Barrier(comm);
}

int MPI_Allgather(const void* in, int n, MPI_Datatype in_type, void* out, int m,
                  MPI_Datatype out_type, MPI_Comm comm) {
  count(ALLGATHER);
  return PMPI_Allgather(in, n, in_type, out, m, out_type, comm);
}

int MPI_Iallreduce(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  count(OTHER);
  return PMPI_Iallreduce(in, out, n, type, op, comm, request);
}

int MPI_Reduce(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  count(OTHER);
  return PMPI_Reduce(in, out, n, type, op, root, comm);
}

int MPI_Gather(const void* in, int n, MPI_Datatype in_type, void* out, int m, MPI_Datatype out_type,
               int root, MPI_Comm comm) {
  count(OTHER);
  return PMPI_Gather(in, n, in_type, out, m, out_type, root, comm);
}

int MPI_Finalize(void) {
  const char* dir = getenv("SLIMTRAIN_MPI_COUNT_DIR");
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (dir != NULL) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.txt", dir, rank);
    FILE* f = fopen(path, "w");
    if (f != NULL) {
      for (int k = 0; k < KINDS; ++k) fprintf(f, "%s %ld\n", names[k], counts[k]);
      fclose(f);
    }
  }
  return PMPI_Finalize();
}
