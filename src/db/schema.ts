// Transitional: src/nocode still imports the tables from here until its imports move to
// ./schema/nocode; this file then goes.
export * from "./schema/nocode";
export * from "./schema/ssh";
