// siwx-cost-mark ID: executes siwx's marker instruction with ID (0-65535)
// once, for the cost plugin (cost_plugin.cc) to write its counts at; a NOP
// anywhere else. Runs in the guests, linked statically so that one binary
// serves every Debian release.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "x86_insn.h"

int main(int argc, char** argv) {
    char* end = nullptr;
    const unsigned long id = argc == 2 ? std::strtoul(argv[1], &end, 10) : 0;
    if (argc != 2 || *end != '\0' || id > 0xffff) {
        std::fprintf(stderr, "usage: siwx-cost-mark ID (0-65535)\n");
        return 2;
    }
    // The marker is built at run time: its ID is part of the instruction.
    void* page =
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        std::perror("siwx-cost-mark: mmap");
        return 1;
    }
    auto* code = static_cast<uint8_t*>(page);
    siwx_cost::EncodeMark(static_cast<uint16_t>(id), code);
    code[siwx_cost::kMarkSize] = 0xc3;  // ret
    reinterpret_cast<void (*)()>(page)();
    return 0;
}
