// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The stage's page pool: stage pages that TCP took by reference, kept
 * in the order they were filled, so that the oldest is written again
 * once TCP has let go of it instead of a new page taking its place.
 *
 * Why: every new page is zeroed by the page allocator (init_on_alloc,
 * Debian's default), and a stream fills a page per 4 KiB. Measured on
 * Linux 6.12 under TCG, that zeroing was about 12% of a 1 MiB writer's
 * time, more than the MPA CRC (docs/performance.md). TCP's own copy pays
 * the same for its page_frag, which it reuses only when no skb holds it.
 *
 * TCP lets go of pages in about the order they were sent, as the peer
 * acknowledges them, so only the oldest page is ever looked at. A
 * connection keeps at most its TCP send buffer's worth of pages (TCP
 * holds no more than that of them, so a full window never waits on the
 * pool) and at most tx_pool of them; all connections together keep at
 * most siwx_tx_pool_budget() pages, beyond which a page is let go as
 * before. A page the pool lets go of while TCP still holds it lives on
 * through TCP's references.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <net/sock.h>

#include "siwx.h"
#include "siwx_conn.h"

static unsigned int siwx_tx_pool_max = SIWX_TX_POOL;
module_param_named(tx_pool, siwx_tx_pool_max, uint, 0644);
MODULE_PARM_DESC(tx_pool,
		 "stage pages a connection keeps for reuse once TCP lets go of them (0: none, every page new and zeroed; at most 1024)");

/* Pages kept by all connections' pools */
static atomic_long_t siwx_tx_pool_pages = ATOMIC_LONG_INIT(0);

/* At most 1/64 of memory and 64 MiB kept in all pools together */
static long siwx_tx_pool_budget(void)
{
	return min_t(long, totalram_pages() / 64, SZ_64M >> PAGE_SHIFT);
}

bool siwx_tx_pool_on(void)
{
	return READ_ONCE(siwx_tx_pool_max) != 0;
}

/* How many pages @conn may keep now */
static u32 siwx_tx_pool_cap(struct siwx_conn *conn)
{
	u32 cap = min_t(u32, READ_ONCE(siwx_tx_pool_max), SIWX_TX_POOL);
	struct socket *sock = conn->sock;

	if (!sock)
		return 0;
	return min_t(u32, cap,
		     DIV_ROUND_UP(READ_ONCE(sock->sk->sk_sndbuf), PAGE_SIZE));
}

static struct page *siwx_tx_pool_pop(struct siwx_tx_pool *pool)
{
	struct page *page = pool->ring[pool->head];

	pool->head = (pool->head + 1) % SIWX_TX_POOL;
	pool->n--;
	atomic_long_dec(&siwx_tx_pool_pages);
	return page;
}

/* A stage page: the oldest kept if TCP has let go of it, else a new one */
struct page *siwx_tx_pool_get(struct siwx_conn *conn)
{
	struct siwx_tx_pool *pool = &conn->tx_pool;

	if (pool->n && page_ref_count(pool->ring[pool->head]) == 1) {
		siwx_copies_add(tx_stage_reused, 1);
		return siwx_tx_pool_pop(pool);
	}
	siwx_copies_add(tx_stage_new, 1);
	return alloc_page(GFP_KERNEL);
}

/* @page, filled and given to TCP, is ours no more until TCP lets go */
void siwx_tx_pool_put(struct siwx_conn *conn, struct page *page)
{
	struct siwx_tx_pool *pool = &conn->tx_pool;
	u32 cap = siwx_tx_pool_cap(conn);

	/* Full: the oldest goes, which TCP holds still if it holds any */
	while (pool->n && pool->n >= cap)
		put_page(siwx_tx_pool_pop(pool));
	if (!cap || atomic_long_inc_return(&siwx_tx_pool_pages) >
		    siwx_tx_pool_budget()) {
		if (cap)
			atomic_long_dec(&siwx_tx_pool_pages);
		put_page(page);
		return;
	}
	pool->ring[(pool->head + pool->n) % SIWX_TX_POOL] = page;
	pool->n++;
}

/* The connection is gone: TCP's references keep what its skbs need */
void siwx_tx_pool_release(struct siwx_conn *conn)
{
	while (conn->tx_pool.n)
		put_page(siwx_tx_pool_pop(&conn->tx_pool));
}
