import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * @graphql-codegen for the GraphQL surface (docs/client.md): typed documents for the example
 * operations of clients/graphql/operations/, checked against the checked-in schema.graphql
 * (`npm run schema:print` writes it from the code). Paths are relative to the repository root.
 * `npm run client:generate` writes clients/graphql/generated/ (with the REST clients);
 * `npm run graphql:codegen` runs the CLI on this file alone. The drift test keeps both current.
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['clients/graphql/operations/*.graphql'],
  ignoreNoDocuments: false,
  generates: {
    'clients/graphql/generated/': {
      preset: 'client',
      presetConfig: {
        // Plain typed documents; no fragment masking for two operations.
        fragmentMasking: false,
      },
      config: {
        // ESM with NodeNext resolution and verbatimModuleSyntax: `.js` on relative imports, `import type`.
        emitLegacyCommonJSImports: false,
        useTypeImports: true,
        // Custom scalars as the service serializes them.
        scalars: {
          Date: 'string',
          DateTime: 'string',
          Money: 'number',
        },
        enumsAsTypes: true,
        // Only the types the operations use (their variables, inputs and enums), not the whole schema.
        onlyOperationTypes: true,
        avoidOptionals: false,
      },
    },
  },
};

export default config;
