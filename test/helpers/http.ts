// Raw HTTP/1.1 requests for server tests: the target reaches the server byte for byte (fetch would normalise `..` and encodings).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Map<string, string>;
  head: string;
  body: Buffer;
}

/**
 * Sends one request and reads the answer until the server closes the connection. A server that never answers (it
 * crashed in its handler and left the socket open) rejects after `guardMs` instead of hanging the suite.
 */
export function rawRequest(port: number, target: string, opts: { method?: string; headers?: Record<string, string>; guardMs?: number } = {}): Promise<RawResponse> {
  const headers = { Host: `127.0.0.1:${port}`, ...opts.headers, Connection: 'close' };
  const lines = [`${opts.method ?? 'GET'} ${target} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    const chunks: Buffer[] = [];
    sock.setTimeout(opts.guardMs ?? 15_000, () => {
      sock.destroy();
      reject(new Error(`no answer to ${opts.method ?? 'GET'} ${target.slice(0, 200)}`));
    });
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split < 0 ? all.length : split).toString('latin1');
      const [statusLine, ...fields] = head.split('\r\n');
      const map = new Map<string, string>();
      for (const f of fields) {
        const colon = f.indexOf(':');
        if (colon > 0) map.set(f.slice(0, colon).trim().toLowerCase(), f.slice(colon + 1).trim());
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: map, head, body: split < 0 ? Buffer.alloc(0) : all.subarray(split + 4) });
    });
    sock.on('error', reject);
  });
}

/**
 * Runs `mudm-tiles serve ...args` as its own process and waits for the URL it prints. Stop it with `child.kill`;
 * `stderr()` is what it wrote there so far.
 */
export async function spawnServe(bin: string, args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stderr?.on('data', (d) => { stderr += String(d); });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      stdout += String(d);
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`serve exited early with ${code}: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}
