#include "address_classes.h"

#include <algorithm>
#include <sstream>

namespace siwx_cost {

bool AddressClasses::Load(std::istream& in, std::string* error) {
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        line = line.substr(0, line.find('#'));
        std::istringstream fields(line);
        std::string start, end, cls;
        if (!(fields >> start)) continue;
        AddressRange r{};
        try {
            fields >> end >> cls;
            r.start = std::stoull(start, nullptr, 16);
            r.end = std::stoull(end, nullptr, 16);
        } catch (const std::exception&) {
            *error = "line " + std::to_string(n) + ": expected START END CLASS (hex addresses)";
            return false;
        }
        if (cls == "tick") {
            r.cls = AddressClass::kTick;
        } else if (cls == "idle") {
            r.cls = AddressClass::kIdle;
        } else if (cls == "tick-entry") {
            r.cls = AddressClass::kTickEntry;
        } else if (cls == "irq-entry") {
            r.cls = AddressClass::kIrqEntry;
        } else {
            *error = "line " + std::to_string(n) + ": class '" + cls +
                     "' is not tick, idle, tick-entry or irq-entry";
            return false;
        }
        if (r.end <= r.start) {
            *error = "line " + std::to_string(n) + ": empty range";
            return false;
        }
        ranges_.push_back(r);
    }
    std::sort(ranges_.begin(), ranges_.end(),
              [](const AddressRange& a, const AddressRange& b) { return a.start < b.start; });
    for (size_t i = 1; i < ranges_.size(); ++i) {
        if (ranges_[i].start < ranges_[i - 1].end) {
            std::ostringstream msg;
            msg << "ranges overlap at 0x" << std::hex << ranges_[i].start;
            *error = msg.str();
            return false;
        }
    }
    return true;
}

AddressClass AddressClasses::EntryAt(uint64_t addr) const {
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), addr,
                               [](const AddressRange& r, uint64_t a) { return r.start < a; });
    if (it == ranges_.end() || it->start != addr) return AddressClass::kPath;
    const bool entry = it->cls == AddressClass::kTickEntry || it->cls == AddressClass::kIrqEntry;
    return entry ? it->cls : AddressClass::kPath;
}

AddressClass AddressClasses::Of(uint64_t addr) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), addr,
                               [](uint64_t a, const AddressRange& r) { return a < r.start; });
    if (it == ranges_.begin()) return AddressClass::kPath;
    --it;
    return addr < it->end ? it->cls : AddressClass::kPath;
}

}  // namespace siwx_cost
