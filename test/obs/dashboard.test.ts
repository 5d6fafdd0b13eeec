// The shipped Grafana dashboard (docs/grafana/harnesshost-dashboard.json) queries only metrics the
// host declares: every `harnesshost_…` name in every panel query, less its histogram suffix, is a family
// test/obs/metrics.test.ts finds in a real scrape (METRIC_FAMILIES), and every family has a panel.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { METRIC_FAMILIES } from "./scrape.js";

const DASHBOARD = join(import.meta.dirname, "../../docs/grafana/harnesshost-dashboard.json");

interface Panel {
  readonly title: string;
  readonly targets?: readonly { readonly expr?: string }[];
}

describe("Grafana dashboard", () => {
  it("everyDashboardQueryNamesAMetricTheScrapeTestAssertsExists", () => {
    const doc = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] };
    const used = new Set<string>();
    for (const panel of doc.panels) {
      const exprs = (panel.targets ?? []).map((t) => t.expr ?? "");
      expect(exprs.length, panel.title).toBeGreaterThan(0);
      for (const expr of exprs) {
        const names = [...expr.matchAll(/\bharnesshost_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, ""));
        expect(names.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        for (const name of names) {
          expect(METRIC_FAMILIES, `${panel.title} queries ${name}`).toContain(name);
          used.add(name);
        }
      }
    }
    expect([...METRIC_FAMILIES].filter((f) => !used.has(f))).toEqual([]);
  });
});
