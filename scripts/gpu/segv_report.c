// A diagnostic for a lent GPU machine, which has no gdb: preloaded, it prints on SIGSEGV, SIGBUS
// or SIGILL the thread's name, rip, the fault address and every stack word that lies in a loaded
// object (a return-address scan that still works after a call to address 0), then dies as before.
//   gcc -shared -fPIC -O1 -o /tmp/segv.so scripts/gpu/segv_report.c -ldl
//   LD_PRELOAD=/tmp/segv.so mpirun -np 1 -x LD_PRELOAD build-gpu/apps/slimtrain train ...
// Offsets into slimtrain itself: addr2line -f -C -e build-gpu/apps/slimtrain OFFSET.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <ucontext.h>
#include <unistd.h>

static void report(int sig, siginfo_t* si, void* ctx) {
  ucontext_t* uc = (ucontext_t*)ctx;
  void* rip = (void*)uc->uc_mcontext.gregs[REG_RIP];
  void** sp = (void**)uc->uc_mcontext.gregs[REG_RSP];
  char name[32] = {0};
  prctl(PR_GET_NAME, name);
  fprintf(stderr, "segv_report: signal %d in thread '%s' (tid %ld) rip %p fault address %p\n", sig,
          name, (long)gettid(), rip, si->si_addr);
  Dl_info d;
  if (dladdr(rip, &d) && d.dli_fname)
    fprintf(stderr, "segv_report: rip in %s+%#lx (%s)\n", d.dli_fname,
            (unsigned long)((char*)rip - (char*)d.dli_fbase), d.dli_sname ? d.dli_sname : "?");
  for (int i = 0; i < 256; ++i) {
    void* w = sp[i];
    if (w && dladdr(w, &d) && d.dli_fname)
      fprintf(stderr, "segv_report: [sp+%d] %s +%#lx %s\n", i * 8, d.dli_fname,
              (unsigned long)((char*)w - (char*)d.dli_fbase), d.dli_sname ? d.dli_sname : "?");
  }
  fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  static char stack[1 << 16];
  stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = report;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGILL, &sa, NULL);
}
