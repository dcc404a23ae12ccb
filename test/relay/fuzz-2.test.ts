/**
 * The relay's route fuzz, its second part: every other route of the listing, the others in
 * fuzz-1.test.ts, whose header says what is checked.
 *
 * @module-tag slow
 */
import { routeFuzz } from '../helpers/fuzz/routes-suite.js';

routeFuzz(2, 2);
