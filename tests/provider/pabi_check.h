/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the files of siwx_pabi_layout_test share: the check macros, the
 * failure count (defined in pabi_layout_test.c) and the steps one file
 * runs on another's behalf. See pabi_layout_test.c for what is tested.
 */
#ifndef PABI_CHECK_H
#define PABI_CHECK_H

#include <stdio.h>
#include <stdlib.h>

struct ibv_context;
struct ibv_device;
struct ibvp_device;

extern int failures;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

#define REQUIRE(cond, ...)                        \
    do {                                          \
        CHECK(cond, __VA_ARGS__);                 \
        if (!(cond)) {                            \
            fprintf(stderr, "cannot continue\n"); \
            exit(1);                              \
        }                                         \
    } while (0)

/* pabi_layout_test.c */
struct ibvp_device* to_ibvp_dev(struct ibv_device* dev);
struct ibv_context* open_fake(struct ibv_device* dev);

/* 3. pabi_ops_table.c */
void check_ops_table(struct ibv_device* dev);

/* 4. pabi_data_path.c */
void check_data_path(struct ibv_context* ctx);

#endif /* PABI_CHECK_H */
