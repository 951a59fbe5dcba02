#include "call_stacks.h"

namespace siwx_cost {

void CallStacks::Call(uint64_t slot, uint64_t ret) {
    Stack& s = stacks_[slot >> kStackShift];
    s.erase(s.begin(), s.lower_bound(slot));
    s[slot] = ret;
    current_ = &s;
    ++generation_;
}

void CallStacks::Ret(uint64_t slot) {
    Stack& s = stacks_[slot >> kStackShift];
    s.erase(s.begin(), s.upper_bound(slot));
    current_ = &s;
    ++generation_;
}

size_t CallStacks::Chain(uint64_t* out, size_t max) const {
    size_t n = 0;
    if (!current_) return 0;
    for (auto it = current_->begin(); it != current_->end() && n < max; ++it) out[n++] = it->second;
    return n;
}

}  // namespace siwx_cost
