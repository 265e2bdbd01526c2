/** Types of scripts/validate-openapi.mjs for the tests that import it. */
export declare const SERVED_DOCUMENTS: string[];
export declare function openApiValidatorProblems(document: object): Promise<string[]>;
