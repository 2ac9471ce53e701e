// SPDX-License-Identifier: GPL-2.0
/*
 * The fixed numbers of the /dev/sdr contract (uapi/sdr_uapi.h): each
 * SDR_*_SIZE_V1 is the size version 1 of its struct was published with,
 * which is where version 1's last field ends, however the struct grows;
 * SDR_IOC_QUERY's layout; and one name per defined policy.  The kernel
 * asserts the same sizes at build time (kernel/sdr_cdev.c).
 */
#include <stddef.h>
#include <string.h>

#include "tap.h"
#include "tests.h"
#include "../../uapi/sdr_uapi.h"

#define offsetofend(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))

/* V1: the published number, the end of version 1, no more than the struct */
#define V1(type, v1, last, published) do {				\
	CHECK_EQ(v1, published);					\
	CHECK_EQ(v1, offsetofend(struct type, last));			\
	CHECK(sizeof(struct type) >= (v1));				\
	CHECK_EQ(offsetof(struct type, size), 0);			\
	CHECK_EQ(offsetof(struct type, flags), 4);			\
} while (0)

static void test_uapi_size_v1(void)
{
	V1(sdr_bind, SDR_BIND_SIZE_V1, ring, 144);
	V1(sdr_flow_create, SDR_FLOW_CREATE_SIZE_V1, pkt_bitmap, 176);
	V1(sdr_flow_connect, SDR_FLOW_CONNECT_SIZE_V1, peer, 88);
	V1(sdr_flow_destroy, SDR_FLOW_DESTROY_SIZE_V1, __reserved, 16);
	V1(sdr_flow_info, SDR_FLOW_INFO_SIZE_V1, spurious_retx, 112);
	V1(sdr_recv_post, SDR_RECV_POST_SIZE_V1, user_data, 32);
	V1(sdr_recv_complete, SDR_RECV_COMPLETE_SIZE_V1, __reserved, 24);
	V1(sdr_send_post, SDR_SEND_POST_SIZE_V1, group, 56);
	V1(sdr_flow_modify, SDR_FLOW_MODIFY_SIZE_V1, policy, 16);
	V1(sdr_query, SDR_QUERY_SIZE_V1, __reserved, 80);
	V1(sdr_flow_rail, SDR_FLOW_RAIL_SIZE_V1, ep_paths, 200);
	/* the structs inside them are fixed too */
	CHECK_EQ(sizeof(struct sdr_endpoint), 72);
	CHECK_EQ(sizeof(struct sdr_ring_offsets), 24);
	CHECK_EQ(sizeof(struct sdr_cqe), 32);
	CHECK_EQ(sizeof(struct sdr_recv_state), 64);
}

/* Version 2: the EC geometry, after version 1, at fixed places. */
static void test_uapi_size_v2(void)
{
	CHECK_EQ(SDR_FLOW_CREATE_SIZE_V2, 184);
	CHECK_EQ(offsetof(struct sdr_flow_create, ec_k), SDR_FLOW_CREATE_SIZE_V1);
	CHECK_EQ(offsetofend(struct sdr_flow_create, ec_m), SDR_FLOW_CREATE_SIZE_V2);
	CHECK_EQ(SDR_FLOW_MODIFY_SIZE_V2, 24);
	CHECK_EQ(offsetof(struct sdr_flow_modify, ec_k), SDR_FLOW_MODIFY_SIZE_V1);
	CHECK_EQ(offsetofend(struct sdr_flow_modify, ec_m), SDR_FLOW_MODIFY_SIZE_V2);
	CHECK_EQ(offsetof(struct sdr_flow_modify, rate_mbit), SDR_FLOW_MODIFY_SIZE_V2);
	CHECK_EQ(sizeof(struct sdr_flow_modify), SDR_FLOW_MODIFY_SIZE_V3);
	/* flow_info grew into its reserved words, not past them */
	CHECK_EQ(offsetof(struct sdr_flow_info, ec_k), 96);
	CHECK_EQ(offsetof(struct sdr_flow_info, ec_m), 100);
	CHECK_EQ(offsetof(struct sdr_flow_info, spurious_retx), 104);
	CHECK_EQ(sizeof(struct sdr_flow_info), SDR_FLOW_INFO_SIZE_V1);
	CHECK_EQ(SDR_FLOW_MODIFY_EC, 2);
}

/* Version 3 of flow create, 2 of connect: the paths, after the rest. */
static void test_uapi_size_v3(void)
{
	CHECK_EQ(SDR_PATHS_MAX, 8);
	CHECK_EQ(sizeof(struct sdr_ep_paths), 40);
	CHECK_EQ(offsetof(struct sdr_ep_paths, qpn), 8);
	CHECK_EQ(SDR_FLOW_CREATE_SIZE_V3, 232);
	CHECK_EQ(offsetof(struct sdr_flow_create, paths), SDR_FLOW_CREATE_SIZE_V2);
	CHECK_EQ(offsetof(struct sdr_flow_create, ep_paths), 192);
	CHECK_EQ(offsetofend(struct sdr_flow_create, ep_paths),
		 SDR_FLOW_CREATE_SIZE_V3);
	CHECK_EQ(SDR_FLOW_CONNECT_SIZE_V2, 128);
	CHECK_EQ(offsetof(struct sdr_flow_connect, peer_paths),
		 SDR_FLOW_CONNECT_SIZE_V1);
	CHECK_EQ(offsetofend(struct sdr_flow_connect, peer_paths),
		 SDR_FLOW_CONNECT_SIZE_V2);
}

/* Version 4 of flow create, 3 of connect: authentication, after the rest. */
static void test_uapi_size_auth(void)
{
	CHECK_EQ(SDR_AUTH_DEFAULT, 0);
	CHECK_EQ(SDR_AUTH_OFF, 1);
	CHECK_EQ(SDR_AUTH_VMAC64, 2);
	CHECK_EQ(SDR_AUTH_KEY_LEN, 16);
	CHECK_EQ(sizeof(struct sdr_ep_auth), 24);
	CHECK_EQ(offsetof(struct sdr_ep_auth, key), 8);
	CHECK_EQ(offsetof(struct sdr_flow_create, auth), SDR_FLOW_CREATE_SIZE_V3);
	CHECK_EQ(offsetof(struct sdr_flow_create, ep_auth), 240);
	CHECK_EQ(offsetofend(struct sdr_flow_create, ep_auth),
		 SDR_FLOW_CREATE_SIZE_V4);
	CHECK_EQ(SDR_FLOW_CREATE_SIZE_V4, 264);
	CHECK_EQ(offsetof(struct sdr_flow_connect, peer_auth),
		 SDR_FLOW_CONNECT_SIZE_V2);
	CHECK_EQ(offsetofend(struct sdr_flow_connect, peer_auth),
		 SDR_FLOW_CONNECT_SIZE_V3);
	CHECK_EQ(SDR_FLOW_CONNECT_SIZE_V3, 152);
	CHECK_EQ(SDR_FEATURE_AUTH, 1ULL << 0);
}

/*
 * ABI 9, the key exchange: version 5 of flow create (the job secret's
 * name in, the share out), 4 of connect (the peer's share), the AEAD.
 */
static void test_uapi_size_kex(void)
{
	CHECK_EQ(SDR_AUTH_AEAD, 3);
	CHECK_EQ(SDR_AUTH_NR, 4);
	CHECK_EQ(SDR_KEX_PUB_LEN, 32);
	CHECK_EQ(SDR_KEX_MAC_LEN, 16);
	CHECK_EQ(SDR_KEX_F_PSK, 1);
	CHECK_EQ(SDR_SECRET_NAME_LEN, 48);
	CHECK_EQ(sizeof(struct sdr_ep_kex), 56);
	CHECK_EQ(offsetof(struct sdr_ep_kex, pub), 8);
	CHECK_EQ(offsetof(struct sdr_ep_kex, mac), 40);
	CHECK_EQ(offsetof(struct sdr_flow_create, secret),
		 SDR_FLOW_CREATE_SIZE_V4);
	CHECK_EQ(offsetof(struct sdr_flow_create, ep_kex), 312);
	CHECK_EQ(sizeof(struct sdr_flow_create), SDR_FLOW_CREATE_SIZE_V5);
	CHECK_EQ(SDR_FLOW_CREATE_SIZE_V5, 368);
	CHECK_EQ(offsetof(struct sdr_flow_connect, peer_kex),
		 SDR_FLOW_CONNECT_SIZE_V3);
	CHECK_EQ(sizeof(struct sdr_flow_connect), SDR_FLOW_CONNECT_SIZE_V4);
	CHECK_EQ(SDR_FLOW_CONNECT_SIZE_V4, 208);
	CHECK_EQ(SDR_FEATURE_KEX, 1ULL << 5);
	CHECK_EQ(SDR_FEATURE_AEAD, 1ULL << 6);
	CHECK_EQ(SDR_KEX_NONE, 0);
	CHECK_EQ(SDR_KEX_EPHEMERAL, 1);
	CHECK_EQ(SDR_KEX_PSK, 2);
}

static void test_uapi_rail_layout(void)
{
	CHECK_EQ(SDR_IOC_FLOW_RAIL, _IO(SDR_IOC_MAGIC, 0x0a));
	CHECK_EQ(SDR_RAILS_MAX, 4);
	CHECK_EQ(SDR_RAIL_ADD, 0);
	CHECK_EQ(SDR_RAIL_CONNECT, 1);
	CHECK_EQ(SDR_FEATURE_RAILS, 1ULL << 2);
	CHECK_EQ(offsetof(struct sdr_flow_rail, flow_id), 8);
	CHECK_EQ(offsetof(struct sdr_flow_rail, op), 12);
	CHECK_EQ(offsetof(struct sdr_flow_rail, rail), 16);
	CHECK_EQ(offsetof(struct sdr_flow_rail, paths), 20);
	CHECK_EQ(offsetof(struct sdr_flow_rail, ibdev), 24);
	CHECK_EQ(offsetof(struct sdr_flow_rail, ep), 88);
	CHECK_EQ(offsetof(struct sdr_flow_rail, ep_paths), 160);
}

/* groups: the ioctl, its struct, and what posts and completions gained */
static void test_uapi_group_layout(void)
{
	CHECK_EQ(SDR_IOC_GROUP, _IO(SDR_IOC_MAGIC, 0x0b));
	CHECK_EQ(SDR_FEATURE_GROUPS, 1ULL << 3);
	CHECK_EQ(SDR_GROUPS_MAX, 256);
	CHECK_EQ(SDR_GROUP_OPEN, 0);
	CHECK_EQ(SDR_GROUP_CLOSE, 1);
	CHECK_EQ(SDR_CQE_GROUP, 3);
	CHECK_EQ(sizeof(struct sdr_group), SDR_GROUP_SIZE_V1);
	CHECK_EQ(SDR_GROUP_SIZE_V1, 24);
	CHECK_EQ(offsetof(struct sdr_group, op), 8);
	CHECK_EQ(offsetof(struct sdr_group, group), 12);
	CHECK_EQ(offsetof(struct sdr_group, user_data), 16);
	/* the send post's group is where version 1 had __reserved */
	CHECK_EQ(SDR_SEND_GROUP, 1U << 4);
	CHECK_EQ(offsetof(struct sdr_send_post, group), 52);
	CHECK_EQ(SDR_RECV_GROUP, 1U << 0);
	CHECK_EQ(SDR_RECV_POST_SIZE_V2, 40);
	CHECK_EQ(offsetof(struct sdr_recv_post, group), 32);
}

/*
 * ABI 6, registered memory: two ioctls after the group's, version 3 of
 * the receive post (its mr_id where version 2 had __reserved) and
 * version 2 of the send post, a status and a feature bit; the flags
 * ABI 8 added.
 */
static void test_uapi_mr_layout(void)
{
	CHECK_EQ(SDR_ABI_VERSION, 9);
	CHECK_EQ(SDR_IOC_MR_REG, _IO(SDR_IOC_MAGIC, 0x0c));
	CHECK_EQ(SDR_IOC_MR_DEREG, _IO(SDR_IOC_MAGIC, 0x0d));
	CHECK_EQ(SDR_FEATURE_MR, 1ULL << 4);
	CHECK_EQ(SDR_STATUS_TOOBIG, 4);
	CHECK_EQ(SDR_MR_LEN_MAX, 1ULL << 40);
	CHECK_EQ(sizeof(struct sdr_mr_reg), SDR_MR_REG_SIZE_V1);
	CHECK_EQ(SDR_MR_REG_SIZE_V1, 32);
	CHECK_EQ(offsetof(struct sdr_mr_reg, addr), 8);
	CHECK_EQ(offsetof(struct sdr_mr_reg, len), 16);
	CHECK_EQ(offsetof(struct sdr_mr_reg, mr_id), 24);
	CHECK_EQ(sizeof(struct sdr_mr_dereg), SDR_MR_DEREG_SIZE_V1);
	CHECK_EQ(SDR_MR_DEREG_SIZE_V1, 16);
	CHECK_EQ(offsetof(struct sdr_mr_dereg, mr_id), 8);
	CHECK_EQ(SDR_RECV_MR, 1U << 1);
	CHECK_EQ(offsetof(struct sdr_recv_post, mr_id), SDR_RECV_POST_SIZE_V2 - 4);
	CHECK_EQ(offsetof(struct sdr_recv_post, mr_addr), SDR_RECV_POST_SIZE_V2);
	CHECK_EQ(offsetof(struct sdr_recv_post, mr_len), 48);
	CHECK_EQ(sizeof(struct sdr_recv_post), SDR_RECV_POST_SIZE_V3);
	CHECK_EQ(SDR_RECV_POST_SIZE_V3, 56);
	CHECK_EQ(SDR_SEND_MR, 1U << 5);
	CHECK_EQ(offsetof(struct sdr_send_post, mr_id), SDR_SEND_POST_SIZE_V1);
	CHECK_EQ(sizeof(struct sdr_send_post), SDR_SEND_POST_SIZE_V2);
	CHECK_EQ(SDR_SEND_POST_SIZE_V2, 64);
	/* ABI 8: streams of parts; a receive a stream started says so */
	CHECK_EQ(SDR_SEND_PARTS, 1U << 6);
	CHECK_EQ(SDR_RECV_F_STREAM, 1U << 1);
}

static void test_uapi_query_layout(void)
{
	CHECK_EQ(SDR_IOC_QUERY, _IO(SDR_IOC_MAGIC, 0x09));
	CHECK_EQ(_IOC_NR(SDR_IOC_QUERY), _IOC_NR(SDR_IOC_FLOW_MODIFY) + 1);
	CHECK_EQ(offsetof(struct sdr_query, abi_version), 8);
	CHECK_EQ(offsetof(struct sdr_query, policy_nr), 12);
	CHECK_EQ(offsetof(struct sdr_query, policies), 16);
	CHECK_EQ(offsetof(struct sdr_query, features), 24);
	CHECK_EQ(offsetof(struct sdr_query, ec_max_k), 32);
	CHECK_EQ(offsetof(struct sdr_query, ec_max_m), 36);
	CHECK_EQ(offsetof(struct sdr_query, max_msg_size), 40);
	CHECK_EQ(offsetof(struct sdr_query, max_msgs), 44);
	CHECK_EQ(offsetof(struct sdr_query, paths_max), 48);
	CHECK_EQ(offsetof(struct sdr_query, __reserved0), 52);
	CHECK_EQ(offsetof(struct sdr_query, __reserved), 56);
	CHECK_EQ(sizeof(struct sdr_query), 80);
	CHECK_EQ(SDR_FEATURE_AUTH, 1);
	CHECK_EQ(SDR_FEATURE_MULTIPATH, 2);
}

static void test_uapi_policy_names(void)
{
	static const char *const names[SDR_POLICY_NR] = SDR_POLICY_NAMES;
	static const char *const want[] = {
		"none", "sr", "ec", "adaptive", "auto",
	};
	unsigned int i, j;

	CHECK_EQ(SDR_POLICY_NR, 5);
	CHECK_EQ(SDR_POLICY_AUTO, 4);
	CHECK_EQ(sizeof(want) / sizeof(want[0]), SDR_POLICY_NR);
	for (i = 0; i < SDR_POLICY_NR; i++) {
		CHECK(names[i] && !strcmp(names[i], want[i]));
		for (j = 0; j < i; j++)
			CHECK(strcmp(names[i], names[j]));
	}
	/* 64 bits of sdr_query.policies */
	CHECK(SDR_POLICY_NR <= 64);
	CHECK(SDR_POLICY_DEFAULT >= SDR_POLICY_NR);
}

void test_uapi(void)
{
	TAP_RUN(test_uapi_size_v1);
	TAP_RUN(test_uapi_size_v2);
	TAP_RUN(test_uapi_size_v3);
	TAP_RUN(test_uapi_size_auth);
	TAP_RUN(test_uapi_size_kex);
	TAP_RUN(test_uapi_rail_layout);
	TAP_RUN(test_uapi_group_layout);
	TAP_RUN(test_uapi_mr_layout);
	TAP_RUN(test_uapi_query_layout);
	TAP_RUN(test_uapi_policy_names);
}
