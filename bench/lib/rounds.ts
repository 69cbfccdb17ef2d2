/**
 * Interleaved rounds for rows that compare two of plinth's own paths (a Pod or a Deployment
 * against a ConfigMap). On a shared machine, one run of each side measured a few seconds apart
 * swung such a ratio by ±0.3 between identical runs: the machine's speed drifts between the two
 * phases. Measuring the sides in alternation, round after round, and reporting the round whose
 * ratio is the median keeps one slow stretch from deciding the row; every round's ratio is
 * reported beside it.
 */
import type { PhaseResult } from './context.js';

/** Rounds per interleaved comparison. */
export const ROUNDS = 3;

/** One round: each side's phase, by the scenario's own key. */
export type Round = Record<string, PhaseResult>;

/** plinth ÷ reference throughput of one round. */
export const roundRatio = (round: Round, subject: string, reference: string): number => round[subject]!.opsPerSec / round[reference]!.opsPerSec;

/**
 * The round whose subject ÷ reference ratio is the median (the lower middle one for an even
 * count), and every round's ratio in the order they ran.
 */
export function medianRound(rounds: readonly Round[], subject: string, reference: string): { round: Round; ratios: number[] } {
  if (rounds.length === 0) throw new Error('medianRound: no rounds');
  const ratios = rounds.map((r) => roundRatio(r, subject, reference));
  const order = ratios.map((_, i) => i).sort((a, b) => ratios[a]! - ratios[b]!);
  return { round: rounds[order[Math.floor((order.length - 1) / 2)]!]!, ratios };
}

/** The note's text for a row taken from medianRound. */
export const roundsNote = (ratios: readonly number[]): string => `median of ${ratios.length} interleaved rounds, each round's ratio: ${ratios.map((r) => r.toFixed(2)).join(' / ')}`;

/** Server CPU per request over every round of one side (µs). */
export function cpuPerOp(rounds: readonly Round[], key: string): number {
  let us = 0;
  let ops = 0;
  for (const r of rounds) {
    us += r[key]!.plinthCpuUs ?? 0;
    ops += r[key]!.ops;
  }
  return ops > 0 ? us / ops : 0;
}
