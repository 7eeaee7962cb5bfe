// Static checks of pipelines/ and the Dockerfile: every mudm-tiles command and option they use exists in the CLI.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { parseArgs } from '../../src/cli/args.js';
import { EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OUTPUT, EXIT_UNREADABLE, EXIT_USAGE } from '../../src/cli/exit.js';
import { OPTIONS, flagName, resolveOptions, type Command, type OptionSpec, type Options } from '../../src/options.js';
import { COMMAND_NAMES, ROOT, fakeSbatch, invocationProblems, optionOfFlag, removeTemps, runCli, runProcess, sampleValue, tempDir } from './helpers.js';

const PIPELINES = path.join(ROOT, 'pipelines');

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function obj(v: unknown, what: string): Obj {
  if (!isObj(v)) throw new Error(`${what} is not a mapping`);
  return v;
}

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' || typeof s === 'number')) throw new Error(`${what} is not a list of strings`);
  return v.map(String);
}

/** The CLI's own parser must accept the arguments too (types, choices), not only know their names. */
function parserError(command: string, args: string[]): string | undefined {
  try {
    parseArgs(command as Command, args);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkInvocation(where: string, argv: string[]): { command: string; args: string[] } {
  const [command, ...args] = argv;
  expect(invocationProblems(where, command, args)).toEqual([]);
  expect(parserError(command, args), `${where}: mudm-tiles ${argv.join(' ')}`).toBeUndefined();
  return { command, args };
}

function yamlDocs(file: string): Obj[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d, i) => {
    expect(d.errors, `${file} document ${i}`).toEqual([]);
    return obj(d.toJSON(), `${file} document ${i}`);
  });
}

afterAll(removeTemps);

describe('Kubernetes manifests', () => {
  const dir = path.join(PIPELINES, 'k8s');
  const docs = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).flatMap((f) => yamlDocs(path.join(dir, f)).map((doc) => ({ file: f, doc })));
  const jobs = docs.filter((d) => d.doc.kind === 'Job');
  const pvc = docs.find((d) => d.doc.kind === 'PersistentVolumeClaim');

  /** The one container of a Job, its volumes, and the invocation it runs (the image's ENTRYPOINT is the CLI). */
  function jobParts(file: string, doc: Obj) {
    const pod = obj(obj(obj(doc.spec, 'spec').template, 'template').spec, 'pod spec');
    const containers = pod.containers as Obj[];
    expect(containers, `${file}: one container`).toHaveLength(1);
    const c = containers[0];
    expect(c.command, `${file}: the image's ENTRYPOINT runs the CLI; a command would replace it`).toBeUndefined();
    expect(c.image).toBe('mudm-tiles:latest');
    return { pod, container: c, argv: strings(c.args, `${file} args`) };
  }

  it('has a plan Job, an Indexed build-shard Job and a finalize Job, each a valid mudm-tiles invocation', () => {
    const byCommand = new Map<string, { file: string; doc: Obj; argv: string[] }>();
    for (const { file, doc } of jobs) {
      const { argv } = jobParts(file, doc);
      const { command } = checkInvocation(file, argv);
      byCommand.set(command, { file, doc, argv });
    }
    expect([...byCommand.keys()].sort()).toEqual(['build-shard', 'finalize', 'plan']);

    const plan = byCommand.get('plan')!;
    const shard = byCommand.get('build-shard')!;
    const spec = obj(shard.doc.spec, 'build-shard spec');
    expect(spec.completionMode).toBe('Indexed');
    // The shard comes from JOB_COMPLETION_INDEX: a --shard in the template would give every pod the same one.
    expect(shard.argv).not.toContain('--shard');
    const shards = Number(plan.argv[plan.argv.indexOf('--shards') + 1]);
    expect(shards, 'plan --shards').toBeGreaterThan(0);
    expect(spec.completions, 'completions = plan --shards').toBe(shards);

    // Every step works on the same OUT.
    const out = plan.argv[plan.argv.indexOf('-o') + 1];
    expect(shard.argv[1]).toBe(out);
    expect(byCommand.get('finalize')!.argv[1]).toBe(out);
  });

  it.each(['plan', 'build-shard', 'finalize'])('fails the %s Job at once on an exit code a retry cannot mend, and retries exit 4 and pods lost (podFailurePolicy)', (command) => {
    const job = jobs.find((j) => jobParts(j.file, j.doc).argv[0] === command)!;
    const { pod, container } = jobParts(job.file, job.doc);
    // Kubernetes refuses a podFailurePolicy with another restart policy.
    expect(pod.restartPolicy).toBe('Never');
    type Rule = { action: string; onExitCodes?: { containerName?: string; operator: string; values: number[] }; onPodConditions?: { type: string; status?: string }[] };
    const rules = obj(obj(job.doc.spec, 'spec').podFailurePolicy, `${job.file}: podFailurePolicy`).rules as Rule[];
    for (const r of rules) {
      expect(['FailJob', 'Ignore', 'Count'], r.action).toContain(r.action);
      expect(Number(r.onExitCodes !== undefined) + Number(r.onPodConditions !== undefined), 'one of onExitCodes and onPodConditions').toBe(1);
      if (!r.onExitCodes) continue;
      expect(r.onExitCodes.containerName ?? container.name).toBe(container.name);
      // The API takes them sorted, without repeats and without 0 under In.
      const values = r.onExitCodes.values;
      expect(values).toEqual([...new Set(values)].sort((a, b) => a - b));
      expect(r.onExitCodes.operator === 'In' && values.includes(0)).toBe(false);
    }
    /** What the Job does with a failed pod: the first rule that matches it (Kubernetes' order), else it counts. */
    const action = (code: number, conditions: string[] = []): string => rules.find((r) => (r.onExitCodes
      ? (r.onExitCodes.operator === 'In') === r.onExitCodes.values.includes(code)
      : r.onPodConditions!.some((c) => conditions.includes(c.type) && (c.status ?? 'True') === 'True')))?.action ?? 'Count';
    for (const code of [EXIT_INVALID, EXIT_USAGE, EXIT_UNREADABLE, EXIT_INTERNAL]) expect(action(code), `exit ${code}`).toBe('FailJob');
    for (const code of [EXIT_OUTPUT, EXIT_INTERRUPTED, 143]) expect(action(code), `exit ${code}`).toBe('Count');
    for (const code of [EXIT_USAGE, EXIT_OUTPUT, 143]) expect(action(code, ['DisruptionTarget']), `exit ${code} of a pod lost`).toBe('Ignore');
  });

  it('mounts the shared ReadWriteMany claim at /data in every Job', () => {
    expect(pvc, 'a PersistentVolumeClaim').toBeDefined();
    const claim = obj(pvc!.doc.metadata, 'pvc metadata').name;
    expect(obj(pvc!.doc.spec, 'pvc spec').accessModes).toContain('ReadWriteMany');
    for (const { file, doc } of jobs) {
      const { pod, container } = jobParts(file, doc);
      const mount = (container.volumeMounts as Obj[]).find((m) => m.mountPath === '/data');
      expect(mount, `${file}: /data mounted`).toBeDefined();
      const volume = (pod.volumes as Obj[]).find((v) => v.name === mount!.name);
      expect(obj(volume?.persistentVolumeClaim, `${file} volume`).claimName).toBe(claim);
      expect(obj(pod.securityContext, `${file} securityContext`).runAsNonRoot).toBe(true);
    }
  });
});

describe('Argo WorkflowTemplate', () => {
  const file = path.join(PIPELINES, 'argo', 'workflowtemplate.yaml');
  const [doc] = yamlDocs(file);
  const spec = obj(doc.spec, 'spec');
  const params = new Map((obj(spec.arguments, 'arguments').parameters as Obj[]).map((p) => [String(p.name), String(p.value)]));
  const templates = spec.templates as Obj[];
  const byName = new Map(templates.map((t) => [String(t.name), t]));

  /** Argo placeholders replaced by the workflow's defaults (and shard 0), as a submitted run would see them. */
  function substituted(args: string[]): string[] {
    return args.map((a) => a
      .replace(/\{\{workflow\.parameters\.([\w-]+)\}\}/g, (_, n: string) => params.get(n) ?? `<missing parameter ${n}>`)
      .replace(/\{\{inputs\.parameters\.shard\}\}/g, '0'));
  }

  it('is a WorkflowTemplate whose container steps are valid mudm-tiles invocations on the image', () => {
    expect(doc.kind).toBe('WorkflowTemplate');
    const commands: string[] = [];
    for (const t of templates.filter((x) => x.container)) {
      const c = obj(t.container, `template ${String(t.name)}`);
      expect(c.image).toBe('mudm-tiles:latest');
      expect(c.command).toBeUndefined();
      commands.push(checkInvocation(`argo template ${String(t.name)}`, substituted(strings(c.args, 'args'))).command);
      expect((c.volumeMounts as Obj[]).some((m) => m.mountPath === '/data')).toBe(true);
    }
    expect(commands.sort()).toEqual(['build-shard', 'finalize', 'plan']);
    const claim = (spec.volumes as Obj[]).map((v) => obj(v.persistentVolumeClaim, 'volume').claimName);
    expect(claim).toEqual(['mudm-data']);
  });

  it('runs plan, then build-shard fanned out with withSequence over the planned shards, then finalize', () => {
    const main = obj(byName.get(String(spec.entrypoint)), 'entrypoint template');
    const steps = (main.steps as Obj[][]).map((group) => group.map((s) => s));
    const order = steps.map((group) => group.map((s) => String(s.template)));
    expect(order).toEqual([['plan'], ['build-shard'], ['finalize']]);
    const fan = steps[1][0];
    expect(obj(fan.withSequence, 'withSequence').count).toBe('{{workflow.parameters.shards}}');
    // The fan-out and plan --shards read the same parameter, so they cannot disagree.
    const planArgs = strings(obj(byName.get('plan')?.container, 'plan').args, 'plan args');
    expect(planArgs[planArgs.indexOf('--shards') + 1]).toBe('{{workflow.parameters.shards}}');
    const shardArgs = strings(obj(byName.get('build-shard')?.container, 'build-shard').args, 'build-shard args');
    expect(shardArgs[shardArgs.indexOf('--shard') + 1]).toBe('{{inputs.parameters.shard}}');
    const passed = (obj(fan.arguments, 'arguments').parameters as Obj[]).find((p) => p.name === 'shard');
    expect(passed?.value).toBe('{{item}}');
  });
});

describe('CWL tools and workflow', () => {
  const dir = path.join(PIPELINES, 'cwl');
  const load = (f: string): Obj => obj(parse(fs.readFileSync(path.join(dir, f), 'utf8')), f);

  /** The command line a CWL tool builds, with a sample value for every bound input and templated argument. */
  function toolArgv(f: string): string[] {
    const tool = load(f);
    expect(tool.cwlVersion).toBe('v1.2');
    expect(tool.class).toBe('CommandLineTool');
    const base = strings(tool.baseCommand, `${f} baseCommand`);
    expect(base[0], `${f}: baseCommand starts with mudm-tiles`).toBe('mudm-tiles');
    const argv = base.slice(1);
    for (const a of (tool.arguments as unknown[] | undefined) ?? []) {
      if (typeof a === 'string') { argv.push(a.startsWith('$') ? 'OUT' : a); continue; }
      const b = obj(a, `${f} argument`);
      const prefix = b.prefix as string | undefined;
      if (prefix) {
        const name = optionOfFlag(prefix);
        argv.push(prefix, name ? sampleValue(name) : 'x');
      } else {
        argv.push('OUT');
      }
    }
    for (const [id, input] of Object.entries(obj(tool.inputs, `${f} inputs`))) {
      const binding = isObj(input) ? input.inputBinding : undefined;
      if (!isObj(binding)) continue;
      const prefix = binding.prefix as string | undefined;
      if (!prefix) { argv.push(`<${id}>`); continue; }
      const name = optionOfFlag(prefix);
      const type = String(obj(input, id).type);
      if (type.startsWith('boolean')) argv.push(prefix);
      else argv.push(prefix, name ? sampleValue(name) : 'x');
    }
    return argv;
  }

  it.each([['plan.cwl', 'plan'], ['build-shard.cwl', 'build-shard'], ['finalize.cwl', 'finalize']])('%s runs mudm-tiles %s with options the CLI takes', (f, command) => {
    const argv = toolArgv(f);
    expect(argv[0]).toBe(command);
    checkInvocation(f, argv);
  });

  it('the workflow wires plan → scattered build-shard → finalize, and passes every input it declares', () => {
    const wf = load('mudm-tiles.cwl');
    expect(wf.class).toBe('Workflow');
    const reqs = obj(wf.requirements, 'requirements');
    expect(reqs).toHaveProperty('ScatterFeatureRequirement');
    const steps = obj(wf.steps, 'steps');
    expect(Object.keys(steps)).toEqual(['plan', 'build_shard', 'finalize']);
    const used = new Set<string>();
    for (const [name, s] of Object.entries(steps)) {
      const step = obj(s, name);
      const tool = load(String(step.run));
      const toolInputs = Object.keys(obj(tool.inputs, `${String(step.run)} inputs`));
      for (const [k, src] of Object.entries(obj(step.in, `${name} in`))) {
        expect(toolInputs, `${name}: ${k} is an input of ${String(step.run)}`).toContain(k);
        if (typeof src === 'string' && !src.includes('/')) used.add(src);
      }
    }
    expect(obj(steps.build_shard, 'build_shard').scatter).toBe('shard');
    expect(obj(obj(steps.build_shard, 'build_shard').in, 'in').shard).toBe('plan/shard_indexes');
    expect(obj(obj(steps.finalize, 'finalize').in, 'in').parts).toBe('build_shard/part');
    expect([...used].sort()).toEqual(Object.keys(obj(wf.inputs, 'inputs')).sort());
    // Every build option plan.cwl binds can be set on the workflow.
    const planOptions = Object.entries(obj(load('plan.cwl').inputs, 'plan inputs')).filter(([, v]) => isObj(v) && isObj(v.inputBinding) && v.inputBinding.prefix).map(([k]) => k);
    for (const k of planOptions) expect(Object.keys(obj(wf.inputs, 'inputs')), `workflow input ${k}`).toContain(k);
  });

  it('finalize.cwl merges the parts: the tiles and markers of every shard, the plan and its level-0 records once (finalize tiles a zoom anew from them); a file two shards wrote fails', () => {
    type Entry = { class: 'File' | 'Directory'; basename: string; listing?: Entry[] };
    const iwd = obj(obj(load('finalize.cwl').requirements, 'requirements').InitialWorkDirRequirement, 'InitialWorkDirRequirement');
    // A CWL expression `${ ... }` is the body of a function of `inputs`.
    const body = String(iwd.listing).trim().replace(/^\$\{/, '').replace(/\}$/, '');
    const merge = new Function('inputs', body) as (inputs: { parts: Entry[] }) => { entry: Entry }[];
    const file = (basename: string): Entry => ({ class: 'File', basename });
    const dir = (basename: string, listing: Entry[]): Entry => ({ class: 'Directory', basename, listing });
    const part = (shard: number, tile: string) => dir('out', [
      dir('.mudm-work', [file('plan.json'), dir('level-0', [file('0_0_0_0_0.rec'), file('0_0_0_1_0.rec')]), dir('shards', [file(`${shard}.json`)])]),
      dir('3', [dir('0', [file(tile)])]),
    ]);
    const paths = (e: Entry, at = ''): string[] => (e.listing ?? []).flatMap((c) => (c.class === 'Directory' ? paths(c, `${at}${c.basename}/`) : [`${at}${c.basename}`]));
    expect(paths(merge({ parts: [part(0, '0.pbf'), part(1, '1.pbf')] })[0].entry).sort()).toEqual([
      '.mudm-work/level-0/0_0_0_0_0.rec', '.mudm-work/level-0/0_0_0_1_0.rec', '.mudm-work/plan.json', '.mudm-work/shards/0.json', '.mudm-work/shards/1.json', '3/0/0.pbf', '3/0/1.pbf',
    ]);
    expect(() => merge({ parts: [part(0, '0.pbf'), part(1, '0.pbf')] })).toThrow('two shards wrote 3/0/0.pbf: the parts of a sharded build must be disjoint');
  });

  it('the example job names existing files and only inputs the workflow has', () => {
    const job = obj(parse(fs.readFileSync(path.join(dir, 'job.example.yml'), 'utf8')), 'job');
    const inputs = Object.keys(obj(load('mudm-tiles.cwl').inputs, 'inputs'));
    for (const k of Object.keys(job)) expect(inputs).toContain(k);
    for (const f of job.files as Obj[]) expect(fs.existsSync(path.resolve(dir, String(f.location))), String(f.location)).toBe(true);
  });
});

describe('presets and READMEs', () => {
  /** `mudm-tiles CMD ...` lines of a script or a README: the CLI called by name, by `"${cli[@]}"`, `$cli` or bin/. */
  function invocations(text: string): { line: string; argv: string[] }[] {
    const out: { line: string; argv: string[] }[] = [];
    const re = /(?:"\$\{cli\[@\]\}"|\$cli|\bmudm-tiles|bin\/mudm-tiles\.js)\s+([a-z][a-z-]*)\b(.*)$/;
    for (const line of text.split('\n')) {
      if (/^\s*#/.test(line)) continue;
      const m = re.exec(line);
      if (!m || !COMMAND_NAMES.concat(['build']).includes(m[1]) || m[1] === 'tiles') continue;
      const argv = [m[1]];
      for (const raw of m[2].replace(/\$quoted|\$qsteps|"\$@"|"\$\{step_options\[@\]\}"/g, '').split(/\s+/).filter(Boolean)) {
        // Shell syntax ends the invocation; so does the quote closing a `--wrap="..."` or `$(...)`.
        if (['&', '&&', '||', '|', ';', '>', '2>&1', ')'].includes(raw)) break;
        argv.push(raw.replace(/^["']|["'),]+$/g, ''));
        if (/["'][),]?$/.test(raw) && !/^["']/.test(raw)) break;
      }
      out.push({ line: line.trim(), argv });
    }
    return out;
  }

  const files = [
    ...fs.readdirSync(path.join(PIPELINES, 'presets')).map((f) => path.join('presets', f)),
    'README.md',
  ];

  it.each(files)('pipelines/%s uses only commands and options the CLI has', (f) => {
    const text = fs.readFileSync(path.join(PIPELINES, f), 'utf8');
    // In Markdown, the commands are the fenced code blocks.
    const code = f.endsWith('.md') ? [...text.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)].map((m) => m[1]).join('\n') : text;
    const calls = invocations(code);
    // A preset is a script (a shebang); a file the presets source runs no command.
    if (f.endsWith('.sh') && text.startsWith('#!')) {
      expect(calls.map((c) => c.argv[0]).sort(), `${f} runs the sharded steps`).toEqual(['build-shard', 'finalize', 'plan']);
    }
    for (const c of calls) expect(invocationProblems(`${f}: ${c.line}`, c.argv[0], c.argv.slice(1))).toEqual([]);
  });

  it('the presets pass on, to build-shard and finalize, the options of plan that say how a step runs: those src/options.ts has plan, build-shard and finalize take', () => {
    const text = fs.readFileSync(path.join(PIPELINES, 'presets', 'step-options.sh'), 'utf8');
    const list = (name: string) => (new RegExp(`^${name}=\\(([^)]*)\\)`, 'm').exec(text)?.[1] ?? '').split(/\s+/).filter(Boolean).sort();
    const specs = Object.entries(OPTIONS) as [string, OptionSpec][];
    const taken = specs.filter(([name, spec]) => name !== 'help' && (['plan', 'build-shard', 'finalize'] as const).every((c) => spec.commands.includes(c)));
    expect(list('STEP_VALUED')).toEqual(taken.filter(([, spec]) => spec.type !== 'boolean').map(([name]) => `--${flagName(name)}`).sort());
    expect(list('STEP_SWITCHES')).toEqual(taken.filter(([, spec]) => spec.type === 'boolean').flatMap(([name, spec]) => [`--${flagName(name)}`, ...(spec.short ? [`-${spec.short}`] : [])]).sort());
    expect(list('SHORT_VALUED')).toEqual(specs.filter(([, spec]) => spec.type !== 'boolean' && spec.short && spec.commands.includes('plan')).map(([, spec]) => `-${spec.short}`).sort());
  });

  it('step-options.sh reads short options as the CLI does: one, or a cluster (-qh, -qoDIR), whose letters after one taking a value are that value', async () => {
    const cases = [
      ['in', '-q'], ['in', '-qh'], ['in', '-hq'], ['in', '-qo', 'out'], ['in', '-qoout'], ['-qo=out', 'in', '--log', 'json'],
      ['in', '-oq'], ['in', '-o', 'q', '--workers', '2'], ['in', '-hqq', '--', '-q'], ['in', '--', '-qh'],
    ];
    const script = `. "$1"; shift; c=(); for a in "$@"; do if [ "$a" = '<end>' ]; then step_options "\${c[@]}"; printf '%s\\0' "\${step_options[@]}"; echo; c=(); else c+=("$a"); fi; done`;
    const r = await runProcess('bash', ['-c', script, 'bash', path.join(PIPELINES, 'presets', 'step-options.sh'), ...cases.flatMap((c) => [...c, '<end>'])]);
    expect(r.code, r.stderr).toBe(0);
    const forwarded = r.stdout.split('\n').slice(0, -1).map((line) => line.split('\0').filter(Boolean));
    const stepOf = (o: Options) => ({ quiet: o.quiet, workers: o.workers, log: o.log });
    expect(forwarded.length).toBe(cases.length);
    cases.forEach((argv, i) => {
      expect(parserError('plan', argv), argv.join(' ')).toBeUndefined();
      const plan = resolveOptions(parseArgs('plan', argv).options);
      expect(stepOf(resolveOptions(parseArgs('build-shard', forwarded[i]).options)), `${argv.join(' ')} -> ${forwarded[i].join(' ')}`).toEqual(stepOf(plan));
    });
  });

  describe('what each step of a preset is given (a stand-in CLI records it)', () => {
    /** A stand-in `mudm-tiles` that records its arguments (a file a call, NUL-separated) and succeeds. */
    function recorder(): { cli: string; calls: () => string[][] } {
      const dir = tempDir('calls');
      const cli = path.join(dir, 'mudm-tiles');
      fs.writeFileSync(cli, `#!/bin/sh\nprintf '%s\\0' "$@" > "$(mktemp ${JSON.stringify(path.join(dir, 'call.XXXXXX'))})"\n`);
      fs.chmodSync(cli, 0o755);
      const calls = () => fs.readdirSync(dir).filter((f) => f.startsWith('call.')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\0').slice(0, -1));
      return { cli, calls };
    }
    const given = ['in', '--unit-size', '512', '--memory-budget=512M', '--progress', 'none', '--workers', '1', '--log', 'json', '-q'];

    /** Every step of a run, parsed as the CLI parses it, with the options it resolves to. */
    function steps(calls: string[][], shards: number): Map<string, Options[]> {
      const byCommand = new Map<string, Options[]>();
      for (const [command, ...args] of calls) {
        expect(parserError(command, args), `mudm-tiles ${command} ${args.join(' ')}`).toBeUndefined();
        byCommand.set(command, [...(byCommand.get(command) ?? []), resolveOptions(parseArgs(command as Command, args).options)]);
      }
      expect([...byCommand].map(([c, runs]) => [c, runs.length]).sort()).toEqual([['build-shard', shards], ['finalize', 1], ['plan', 1]]);
      return byCommand;
    }

    function expectStepOptions(byCommand: Map<string, Options[]>): void {
      for (const [command, runs] of byCommand) {
        for (const o of runs) {
          expect({ command, memoryBudget: o.memoryBudget, progress: o.progress, workers: o.workers, log: o.log, quiet: o.quiet }).toEqual({ command, memoryBudget: 512 * 1024 ** 2, progress: 'none', workers: 1, log: 'json', quiet: true });
        }
      }
      expect(byCommand.get('plan')?.[0].unitSize).toBe(512);
    }

    it('sharded-local.sh', async () => {
      const { cli, calls } = recorder();
      const r = await runProcess('bash', [path.join(PIPELINES, 'presets', 'sharded-local.sh'), 'out', '2', ...given], { env: { ...process.env, MUDM_TILES: cli, WORKERS: '3', LOG: 'text' } });
      expect(r.code, r.stderr).toBe(0);
      expectStepOptions(steps(calls(), 2));
    });

    it('slurm-submit.sh', async () => {
      const { cli, calls } = recorder();
      const bin = tempDir('sbatch');
      fakeSbatch(bin, path.join(bin, 'jobs.log'));
      const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, MUDM_TILES: cli, CPUS: '3' };
      const r = await runProcess('bash', [path.join(PIPELINES, 'presets', 'slurm-submit.sh'), 'out', '2', ...given], { env });
      expect(r.code, r.stderr).toBe(0);
      expectStepOptions(steps(calls(), 2));
    });
  });

  it('every file in pipelines/ starts with a comment saying what it is for', () => {
    const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
    for (const f of walk(PIPELINES)) {
      const lines = fs.readFileSync(f, 'utf8').split('\n');
      const first = lines[0].startsWith('#!') ? lines[1] : lines[0];
      expect(first, path.relative(ROOT, f)).toMatch(/^(# |<!-- |\/\/ )\S/);
    }
  });

  it('the commands the pipelines use answer --help (exit 0)', async () => {
    for (const command of ['plan', 'build-shard', 'finalize', 'build']) {
      const r = await runCli([command, '--help']);
      expect(r.code, `${command} --help: ${r.stderr}`).toBe(0);
    }
  });
});

describe('Dockerfile', () => {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const instructions = text.split('\n').filter((l) => /^[A-Z]+\s/.test(l));

  it('builds in one Node 20 stage and runs in a slim one as a non-root user, the CLI as ENTRYPOINT, /data as volume', () => {
    expect(text.split('\n')[0]).toMatch(/^# \S/);
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms).toEqual(['FROM node:20-bookworm-slim AS build', 'FROM node:20-bookworm-slim']);
    const runtime = instructions.slice(instructions.indexOf(froms[1]));
    expect(runtime).toContain('ENTRYPOINT ["mudm-tiles"]');
    expect(runtime).toContain('CMD ["--help"]');
    expect(runtime).toContain('WORKDIR /data');
    expect(runtime).toContain('VOLUME /data');
    const user = runtime.filter((l) => l.startsWith('USER ')).pop();
    expect(user).toBeDefined();
    expect(user).not.toMatch(/USER (root|0)\b/);
    expect(text).toMatch(/npm ci --omit=dev/);
  });

  it('.dockerignore lets in every path package.json "files" ships, and the build inputs', () => {
    const ignore = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('*');
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
    // A `!` entry of "files" keeps something out of the package: nothing to let in.
    const needed = [...pkg.files.filter((f) => f !== 'dist' && !f.startsWith('!')), 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src'];
    for (const f of needed) {
      expect(allowed.some((a) => f === a || f.startsWith(`${a}/`)), `${f} reaches the image build`).toBe(true);
    }
  });
});
