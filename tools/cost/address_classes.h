// Guest kernel address ranges that the cost plugin counts apart from the
// path being measured: the timer tick and the idle loop, whose
// instructions grow with the guest's wall-clock time, not with the work
// (docs/performance.md, "The instruction counter"). Interrupt and
// exception entry points are ranges of their own: from the timer
// interrupt's entry to its IRETQ the plugin counts everything as the
// tick's, and the other entries tell it which IRETQ is the timer's.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace siwx_cost {

enum class AddressClass { kPath, kTick, kIdle, kTickEntry, kIrqEntry };

struct AddressRange {
    uint64_t start;  // first address
    uint64_t end;    // one past the last
    AddressClass cls;
};

class AddressClasses {
  public:
    // Reads lines "START END CLASS [NAME]" (hex addresses, CLASS tick,
    // idle, tick-entry or irq-entry; '#' comments). Returns false with @error set on a bad line or
    // overlapping ranges.
    bool Load(std::istream& in, std::string* error);

    AddressClass Of(uint64_t addr) const;
    // kTickEntry or kIrqEntry where such a range begins, else kPath.
    AddressClass EntryAt(uint64_t addr) const;
    size_t size() const { return ranges_.size(); }

  private:
    std::vector<AddressRange> ranges_;  // sorted, disjoint
};

}  // namespace siwx_cost
