/**
 * Preloaded in every sandboxed child (`--import`, ./sandboxChild.ts sandboxedProcessor): its guard is installed before
 * BullMQ's child wrapper and the processor module load, so that it is the first listener and a child orphaned before its
 * processor loaded leaves too.
 */
import { leaveWithParent } from './sandboxChild.js';

leaveWithParent();
