// Shared assertions for the validator tests: find one issue by code and check its severity, path and message.
import { expect } from 'vitest';
import { RULES, type Issue, type RuleCode } from '../../src/validate/index.js';

export function errors(issues: readonly Issue[]): Issue[] {
  return issues.filter((i) => i.severity === 'error');
}

export function codes(issues: readonly Issue[]): string[] {
  return issues.map((i) => i.code);
}

/** Asserts that `issues` are exactly one issue, of `code`, at `path`, its message containing every fragment. */
export function expectOne(issues: readonly Issue[], code: RuleCode, path: string, ...fragments: string[]): Issue {
  const found = issues.filter((i) => i.code === code);
  expect(found, `issues: ${JSON.stringify(issues)}`).toHaveLength(1);
  expect(codes(issues)).toEqual([code]);
  const issue = found[0];
  expect(issue.severity).toBe(RULES[code].severity);
  expect(issue.path).toBe(path);
  for (const f of fragments) expect(issue.message).toContain(f);
  return issue;
}

/** Asserts that an issue of `code` exists at `path` among possibly several others. */
export function expectSome(issues: readonly Issue[], code: RuleCode, path: string, ...fragments: string[]): Issue {
  const found = issues.find((i) => i.code === code && i.path === path);
  expect(found, `no ${code} at ${path} in ${JSON.stringify(issues)}`).toBeDefined();
  for (const f of fragments) expect((found as Issue).message).toContain(f);
  return found as Issue;
}
