import { expect } from 'chai';
import { ConfigError } from '../../src/config';
import { StartupError } from '../../src/domain/startup-error';
import { HandlerLoadError } from '../../src/handlers/registry';
import { StoreConfigError } from '../../src/storage/store';
import { StoreInUseError } from '../../src/storage/sqlite/store-lock';

describe('StartupError: one class for the reasons the service cannot start', () => {
  it('configuration, store and handler-module errors are StartupErrors with exit code 78 and their own names', () => {
    const errors = [
      new ConfigError('invalid configuration: port'),
      new StoreConfigError('invalid configuration: partitions'),
      new StoreInUseError('/tmp/x.db'),
      new HandlerLoadError('report', './report.js', 'no such file'),
    ];
    for (const err of errors) {
      expect(err).to.be.instanceOf(StartupError);
      expect(err.exitCode, err.name).to.equal(78);
    }
    expect(errors.map((e) => e.name)).to.deep.equal(['ConfigError', 'StoreConfigError', 'StoreInUseError', 'HandlerLoadError']);
  });

  it('an error that is not a StartupError is not one (a bug: exit 1 with its stack)', () => {
    expect(new Error('invalid configuration: looks like one')).not.to.be.instanceOf(StartupError);
  });
});
