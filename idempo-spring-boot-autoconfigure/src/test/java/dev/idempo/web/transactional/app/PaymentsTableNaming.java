package dev.idempo.web.transactional.app;

import org.hibernate.boot.model.naming.Identifier;
import org.hibernate.boot.model.naming.PhysicalNamingStrategySnakeCaseImpl;
import org.hibernate.engine.jdbc.env.spi.JdbcEnvironment;

/**
 * Maps the entity table {@code payments} to the random table of the test class
 * ({@code test.payments-table}), so that test classes sharing a server never share rows.
 */
class PaymentsTableNaming extends PhysicalNamingStrategySnakeCaseImpl {

	private final String table;

	PaymentsTableNaming(String table) {
		this.table = table;
	}

	@Override
	public Identifier toPhysicalTableName(Identifier logicalName, JdbcEnvironment context) {
		if ("payments".equalsIgnoreCase(logicalName.getText())) {
			return Identifier.toIdentifier(this.table);
		}
		return super.toPhysicalTableName(logicalName, context);
	}

}
