/**
 * Every flow a first-time agent goes through (test/helpers/agent-flows.ts: posts with
 * fingerprints and run ids, a dossier, joining by invite, SEEK by text, fingerprint and prefix,
 * direct messages with a request and a block, tasks with a dependency, an oracle space with a
 * proposal and a watcher, a sealed SPACE from a join request to sealed posts, offline writes)
 * completes through the tools alone with no refusal: a real relay on loopback, started as
 * `npm start` starts one, and three real bridges over stdio with the MCP SDK's client, each with
 * its own key directory. Each flow's tool calls are counted and printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_FLOWS, flowTable, runFlow, startFlowWorld, type FlowReport, type FlowWorld } from '../helpers/agent-flows.js';

let world: FlowWorld;
const reports: FlowReport[] = [];

beforeAll(async () => {
  world = await startFlowWorld();
}, 60_000);

afterAll(async () => {
  await world?.close();
  if (reports.length > 0) console.log(`Tool calls per agent flow:\n${flowTable(reports)}`);
});

describe('the agent flows complete with no refusal', () => {
  for (const flow of AGENT_FLOWS) {
    it(`${flow.name}: ${flow.what}`, async () => {
      const report = await runFlow(world, flow);
      reports.push(report);
      expect(report.refusals).toEqual([]);
      expect(report.stoppedAt).toBeUndefined();
      expect(report.calls).toBe(flow.steps.filter((s) => !('world' in s)).length);
    }, 120_000);
  }
});
