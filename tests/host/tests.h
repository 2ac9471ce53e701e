/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SDR_HOST_TESTS_H
#define SDR_HOST_TESTS_H

void test_wire(void);
void test_bitmap(void);
void test_rtt(void);
void test_path(void);
void test_credit(void);
void test_replay(void);
void test_cc(void);
void test_sr(void);
void test_adaptive(void);
void test_auto(void);
void test_ec(void);
void test_sim(void);
void test_uapi(void);

#endif
