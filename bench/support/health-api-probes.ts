// How fast health's API answers with many groups known: ListLinks, GetGroup of random groups, the first
// ListGroups page and a page deep in the listing (continued from its page token), and a walk through
// every page of the listing.
import { summarize, type LatencySummary } from './e2e-latency.js';
import type { HealthApiClient } from './health-api-client.js';
import { groupName } from './health-workload.js';

/** Groups per ListGroups page, as a console would page. */
export const PAGE_SIZE = 100;

/** A walk through every page of ListGroups. */
export interface ListingWalk {
  pages: number;
  /** Groups listed over all pages (the sentinel group included). */
  groups: number;
  total_ms: number;
  page_ms: LatencySummary | undefined;
  /** The token that continues the listing at its middle page: the "deep page" of the other probes. */
  middleToken: string;
}

/** Pages through every group; `expectedGroups` (about) picks the middle page whose token is kept. */
export async function walkListing(client: HealthApiClient, expectedGroups: number): Promise<ListingWalk> {
  const middlePage = Math.floor(expectedGroups / PAGE_SIZE / 2);
  const samples: number[] = [];
  let token = '';
  let middleToken = '';
  let groups = 0;
  const started = performance.now();
  do {
    if (samples.length === middlePage) middleToken = token;
    const { value, ms } = await client.listGroups(PAGE_SIZE, token);
    samples.push(ms);
    groups += value.groups.length;
    token = value.nextPageToken;
  } while (token !== '');
  return {
    pages: samples.length,
    groups,
    total_ms: Math.round(performance.now() - started),
    page_ms: summarize(samples),
    middleToken,
  };
}

/** Latencies of the API calls, each `repeat` times. */
export interface ApiLatencies {
  list_links: LatencySummary | undefined;
  get_group: LatencySummary | undefined;
  list_groups_first_page: LatencySummary | undefined;
  list_groups_deep_page: LatencySummary | undefined;
}

/** One round of the four calls, each timed; `group` is the GetGroup's. */
export async function probeOnce(
  client: HealthApiClient,
  link: { source: string; target: string },
  group: number,
  deepToken: string,
): Promise<{ list_links: number; get_group: number; first_page: number; deep_page: number }> {
  const links = await client.listLinks();
  const one = await client.getGroup(link.source, link.target, groupName(group));
  const first = await client.listGroups(PAGE_SIZE, '');
  const deep = await client.listGroups(PAGE_SIZE, deepToken);
  return { list_links: links.ms, get_group: one.ms, first_page: first.ms, deep_page: deep.ms };
}

/** Collects rounds of {@link probeOnce} and summarises each call. */
export class ProbeSamples {
  private readonly rounds: Array<Awaited<ReturnType<typeof probeOnce>>> = [];

  add(round: Awaited<ReturnType<typeof probeOnce>>): void {
    this.rounds.push(round);
  }

  summary(): ApiLatencies {
    return {
      list_links: summarize(this.rounds.map((r) => r.list_links)),
      get_group: summarize(this.rounds.map((r) => r.get_group)),
      list_groups_first_page: summarize(this.rounds.map((r) => r.first_page)),
      list_groups_deep_page: summarize(this.rounds.map((r) => r.deep_page)),
    };
  }
}
