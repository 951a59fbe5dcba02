// The calls a guest kernel has open, kept by the cost plugin's profile from
// what it sees of CALL and RET: the slot a CALL stores its return address
// to and the slot a RET loads it from. QEMU 7.2's plugin API reads no guest
// register or memory, but a memory callback gives the slot's address, and
// the return address is known at translation. So the profile can say which
// callers a REP string instruction's iterations were spent for
// (docs/performance.md, "Profiles").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace siwx_cost {

class CallStacks {
  public:
    // Kernel stacks (a task's, an interrupt stack) are 16 KiB and aligned
    // to that: a slot's stack is its address without the low 14 bits.
    static constexpr unsigned kStackShift = 14;

    // A CALL stored @ret at @slot: the calls that stack had open below
    // @slot have returned (their slots are free again).
    void Call(uint64_t slot, uint64_t ret);
    // A RET loaded from @slot: that call and any below it are over.
    void Ret(uint64_t slot);
    // Up to @max return addresses of the calls open on the stack that the
    // last CALL or RET used, innermost first; how many.
    size_t Chain(uint64_t* out, size_t max) const;
    // Changes with every Call() and Ret(): a chain read holds until then.
    uint64_t generation() const { return generation_; }

  private:
    using Stack = std::map<uint64_t, uint64_t>;  // slot -> return address
    std::unordered_map<uint64_t, Stack> stacks_;
    const Stack* current_ = nullptr;
    uint64_t generation_ = 0;
};

}  // namespace siwx_cost
