// Per test file: every directory made through test/helpers/temps.ts goes when the file ends, passed or failed.
import { afterAll } from 'vitest';
import { removeMadeTemps } from './helpers/temps.js';

afterAll(removeMadeTemps);
