#pragma once
// A process-wide switch that makes every C++ allocation (operator new) throw
// std::bad_alloc while it is on. The simulated ranks' watchdog
// (common/comm/thread_communicator.hpp) turns it on when this host runs out of
// memory: hundreds of threads in the middle of extracting their graph blocks
// then fail at their next allocation and unwind, instead of growing on until
// the OOM killer ends the process without a word. The replaced operator
// new/delete (allocation_guard.cpp) are malloc and free otherwise. Under
// AddressSanitizer they are not replaced, and the switch does nothing.

namespace gcnlab {

void refuse_allocations(bool on);

}  // namespace gcnlab
