/* Sanitizer builds only (LD_PRELOAD): makes dlclose a no-op so that OpenMPI's
 * plugins stay mapped until exit. LeakSanitizer can then name the library
 * that allocated process-lifetime state and apply tests/support/lsan.supp;
 * without this, their stacks are "<unknown module>" and cannot be suppressed. */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
